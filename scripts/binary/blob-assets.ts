// The files that travel in the blob: every RUNTIME_ASSETS entry (folders walked) and DuckDB's addon
// and library (the library stripped), gzipped when that pays, with the manifest that names them and
// the content hash that names the cache folder.
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { RUNTIME_ASSETS } from '../../src/assets.js';
import { DUCKDB_ADDON, DUCKDB_LIBRARY, MANIFEST_KEY, type Manifest, type ManifestFile } from '../../src/binary/manifest.js';
import { CACHE, DUCKDB_PACKAGE, ROOT } from './config.js';
import { hasTool, run } from './run.js';

interface Source {
  path: string;
  file: string;
  executable: boolean;
}

function walk(dir: string, rel: string, out: Source[]): void {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, `${rel}${name}/`, out);
    else out.push({ path: `${rel}${name}`, file: p, executable: false });
  }
}

/** Every declared runtime file, with its absolute source path; a missing one fails the build. */
export function runtimeFiles(): Source[] {
  const out: Source[] = [];
  for (const entry of RUNTIME_ASSETS) {
    const file = join(ROOT, ...entry.split('/').filter(Boolean));
    if (!existsSync(file))
      throw new Error(`RUNTIME_ASSETS lists ${entry}, which does not exist (run \`npm run build\` first if a build step makes it)`);
    if (entry.endsWith('/')) walk(file, entry, out);
    else out.push({ path: entry, file, executable: false });
  }
  return out;
}

function duckdbFiles(): Source[] {
  const req = createRequire(join(ROOT, 'node_modules', '@duckdb', 'node-bindings', 'package.json'));
  const dir = join(req.resolve(`${DUCKDB_PACKAGE}/package.json`), '..');
  return [
    { path: DUCKDB_ADDON, file: join(dir, 'duckdb.node'), executable: true },
    { path: DUCKDB_LIBRARY, file: join(dir, 'libduckdb.so'), executable: true },
  ];
}

/** Stripping and gzipping the 70 MB library takes seconds: keep the result by content hash. */
function preparedLibrary(file: string, log: (s: string) => void): { data: Buffer; packed: Buffer } {
  const digest = createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 24);
  const dir = join(CACHE, `libduckdb-${digest}`);
  if (!existsSync(join(dir, 'libduckdb.so.gz'))) {
    // Made in a private folder and renamed into place, so a concurrent build never reads half a file.
    mkdirSync(CACHE, { recursive: true });
    const tmp = mkdtempSync(join(CACHE, '.libduckdb-'));
    const stripped = join(tmp, 'libduckdb.so');
    copyFileSync(file, stripped);
    if (hasTool('strip')) run('strip', ['--strip-unneeded', stripped]);
    else log('strip is not installed: libduckdb.so keeps its symbols');
    log('compressing libduckdb.so (once per DuckDB version)');
    writeFileSync(join(tmp, 'libduckdb.so.gz'), gzipSync(readFileSync(stripped)));
    try {
      renameSync(tmp, dir);
    } catch {
      rmSync(tmp, { recursive: true, force: true }); // another build finished first
    }
  }
  return { data: readFileSync(join(dir, 'libduckdb.so')), packed: readFileSync(join(dir, 'libduckdb.so.gz')) };
}

export interface BlobAssets {
  manifest: Manifest;
  /** SEA config `assets`: key -> file to embed. */
  assets: Record<string, string>;
}

export function blobAssets(work: string, version: string, log: (s: string) => void): BlobAssets {
  const dir = join(work, 'assets');
  mkdirSync(dir, { recursive: true });
  const files: ManifestFile[] = [];
  const assets: Record<string, string> = {};
  const hash = createHash('sha256');
  const sources = [...runtimeFiles(), ...duckdbFiles()].sort((a, b) => a.path.localeCompare(b.path));
  sources.forEach((s, i) => {
    let data: Buffer;
    let packed: Buffer;
    if (s.path === DUCKDB_LIBRARY) ({ data, packed } = preparedLibrary(s.file, log));
    else {
      data = readFileSync(s.file);
      packed = data.length > 4096 ? gzipSync(data) : data;
    }
    const gzip = packed !== data && packed.length < data.length;
    const key = `file/${s.path}`;
    const stored = join(dir, String(i));
    writeFileSync(stored, gzip ? packed : data);
    assets[key] = stored;
    files.push({ key, path: s.path, size: data.length, gzip, executable: s.executable });
    hash.update(`${s.path}\0${data.length}\0${createHash('sha256').update(data).digest('hex')}\n`);
  });
  const manifest: Manifest = { version, hash: hash.digest('hex'), files };
  const manifestFile = join(dir, 'manifest.json');
  writeFileSync(manifestFile, JSON.stringify(manifest));
  assets[MANIFEST_KEY] = manifestFile;
  return { manifest, assets };
}
