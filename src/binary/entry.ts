// The single binary's entry point (bundled by scripts/binary): unpack the blob's files into the cache
// folder (once), point the runtime-file root there, then run the ordinary CLI module.
import { getRawAsset } from 'node:sea';
import { setAssetRoot } from '../assets.js';
import { unpackRuntime } from './cache-folder.js';
import { MANIFEST_KEY, type Manifest } from './manifest.js';

function fail(err: unknown): never {
  process.stderr.write(`tracelake: ${(err as Error).message}\n`);
  process.exit(1);
}

try {
  const manifest = JSON.parse(Buffer.from(getRawAsset(MANIFEST_KEY) as ArrayBuffer).toString('utf8')) as Manifest;
  setAssetRoot(unpackRuntime(manifest, (key) => getRawAsset(key) as ArrayBuffer));
} catch (err) {
  fail(err);
}
// Loaded only now, so DuckDB's addon and the runtime files resolve inside the unpacked folder.
import('../cli/main.js').then((m) => m.main(), fail);
