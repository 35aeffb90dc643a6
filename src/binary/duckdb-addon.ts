// The single binary's stand-in for @duckdb/node-bindings (swapped in by the bundler): loads the DuckDB
// addon unpacked in the cache folder, where libduckdb.so sits beside it (the addon's RUNPATH is
// $ORIGIN). The npm package would instead pick a platform package from node_modules.
import { join } from 'node:path';
import { assetRoot } from '../assets.js';
import { CacheFolderError, noexecMessage } from './cache-folder.js';
import { DUCKDB_ADDON } from './manifest.js';
import { noexecMountOf } from './mounts.js';

export function loadDuckDbAddon(): unknown {
  const folder = assetRoot();
  const file = join(folder, ...DUCKDB_ADDON.split('/'));
  const module = { exports: {} as unknown };
  try {
    process.dlopen(module, file);
  } catch (err) {
    const message = (err as Error).message;
    const mount = noexecMountOf(folder);
    if (mount || /failed to map segment/.test(message))
      throw new CacheFolderError(noexecMessage(folder, mount ?? 'unknown mount'), { cause: err });
    throw new Error(`cannot load DuckDB's native library ${file}: ${message}`, { cause: err });
  }
  return module.exports;
}
