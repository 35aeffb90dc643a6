// Makes each of tsc's dist/src/vendor/*.js (a file of re-exports from one package) a single ES module
// holding that package, so a process loads one file where it loaded hundreds (src/vendor/ says which
// packages and why). Native addons stay packages of their own. Run after tsc by `npm run build` and
// `npm test`; a dist left by tsc alone still runs, only slower to start. Running it twice gives the
// same files (a bundle imports no package it holds, so bundling it again changes nothing).
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { packageRoot } from './build-ui.js';

/** Packages that load a native addon by require(): left for Node to load once per process. */
const NATIVE = ['@duckdb/node-bindings'];

export async function bundleVendors(dist = join(packageRoot(), 'dist')): Promise<string[]> {
  const dir = join(dist, 'src', 'vendor');
  const files = readdirSync(dir).filter((f) => f.endsWith('.js'));
  for (const f of files) {
    const file = join(dir, f);
    await build({
      entryPoints: [file],
      outfile: file,
      allowOverwrite: true,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: NATIVE,
      // CommonJS code in an ES module bundle calls require() for the native addon and Node's modules.
      banner: { js: "import { createRequire as __vendorRequire } from 'node:module';\nconst require = __vendorRequire(import.meta.url);" },
      legalComments: 'none',
      logLevel: 'error',
    });
    rmSync(`${file}.map`, { force: true }); // tsc's map is of the re-exports, not of the bundle
  }
  return files;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const files = await bundleVendors();
  process.stdout.write(`vendored packages bundled: ${files.join(', ')}\n`);
}
