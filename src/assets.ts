// Runtime files: every non-code file the program reads from its own package at run time, declared
// once here and always located through assetPath(). A normal install reads them in the package folder
// (beside src/ or dist/); the single binary (`npm run build:binary`) carries exactly these entries in
// its blob and unpacks them into a cache folder laid out like the package, then points the root there.
// So adding a runtime file is: list it below, read it with assetPath(). Nothing else changes.
import { existsSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Paths relative to the package root, with forward slashes. An entry ending in `/` is a folder and
 * ships everything under it (recursively); any other entry is one file. Files made by a build step
 * (under dist/) must exist when the binary is built: `npm run build:binary` runs `npm run build` first.
 */
export const RUNTIME_ASSETS: readonly string[] = [
  'package.json', // name and version (src/version.ts)
  'data/scorers/presets.json', // the built-in scorer catalog (src/catalog/presets.ts)
  'data/model-prices.json', // prices of common models, for computed costs (src/engine/records/model-prices.ts)
  'dist/ui/', // the browser viewer, built by `npm run build` (src/server/viewer.ts)
  'dist/docs-ui/', // Swagger UI's static files for /docs, copied by `npm run build` (src/server/openapi/docs-page.ts)
  'vendor/opentelemetry-proto/', // OTLP's .proto files, read by protobufjs (src/ingest/otlp/wire.ts)
];

export class AssetError extends Error {
  override name = 'AssetError';
}

let root: string | undefined;

/** Used by the single binary only: the folder its runtime files were unpacked into. */
export function setAssetRoot(dir: string): void {
  root = dir;
}

/** The folder runtime files are read from: the package root, or the binary's unpacked cache folder. */
export function assetRoot(): string {
  if (root !== undefined) return root;
  // In the binary's CommonJS bundle import.meta.url is empty; the binary always sets the root before
  // anything reads a file, so reaching this there is a bug to report, not a path to guess.
  const here = import.meta.url;
  if (!here) throw new AssetError('the runtime file folder is not set (bundled build without setAssetRoot)');
  let dir = dirname(fileURLToPath(here));
  // src/assets.ts (tsx, tests) or dist/src/assets.js (the built package): the root holds package.json.
  for (let i = 0; i < 3; i++) {
    dir = dirname(dir);
    if (existsSync(join(dir, 'package.json'))) {
      root = dir;
      return dir;
    }
  }
  throw new AssetError(`no package.json above ${fileURLToPath(here)}`);
}

/** True when `rel` (normalised, relative) is a declared file or lies inside a declared folder. */
export function isDeclaredAsset(rel: string): boolean {
  return RUNTIME_ASSETS.some((entry) => (entry.endsWith('/') ? rel.startsWith(entry) && rel.length > entry.length : rel === entry));
}

/**
 * The absolute path of a declared runtime file (or of a declared folder, given with its trailing
 * slash). Throws for anything undeclared, in every build, so a file missing from RUNTIME_ASSETS fails
 * the ordinary tests instead of only the binary.
 */
export function assetPath(rel: string): string {
  const norm = posix.normalize(rel);
  if (posix.isAbsolute(norm) || norm.startsWith('../') || norm === '..' || norm.includes('\\')) {
    throw new AssetError(`runtime file paths are relative to the package root: ${rel}`);
  }
  if (!isDeclaredAsset(norm) && !RUNTIME_ASSETS.includes(norm)) {
    throw new AssetError(`${rel} is not a declared runtime file: add it to RUNTIME_ASSETS in src/assets.ts`);
  }
  return join(assetRoot(), ...norm.split('/').filter(Boolean));
}
