// The one-file modules of a build, made after tsc by `npm run build` and `npm test`: a process loads
// one file where it loaded hundreds. A dist left by tsc alone still runs, only slower to start.
// - each dist/src/vendor/*.js (tsc's re-exports of one package) becomes a module holding that package
//   (src/vendor/ says which and why);
// - dist/tracelake.mjs holds the whole CLI and server with their packages; `tracelake` runs it while it
//   is newer than the build (src/cli/bundle-choice.ts).
// Native addons stay packages of their own (one per process). Both are made from src/vendor's sources,
// not from dist, where a vendor file may already be a bundle: running this twice gives the same files.
import { readdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { CLI_BUNDLE } from '../src/cli/bundle-choice.js';
import { packageRoot } from './build-ui.js';

/** Packages that load a native addon by require(): left for Node to load once per process. */
const NATIVE = ['@duckdb/node-bindings'];

/** For the CLI's bundle: a vendor module is read from its source (src/vendor/*.ts, re-exports), not from dist. */
const vendorSources = (root: string): Plugin => ({
  name: 'vendor-sources',
  setup(b) {
    b.onResolve({ filter: /\/vendor\/[\w-]+\.js$/ }, (args) =>
      args.importer.includes(`${join('dist', 'src')}`)
        ? { path: join(root, 'src', 'vendor', basename(args.path).replace(/\.js$/, '.ts')) }
        : undefined,
    );
  },
});

async function bundle(entry: string, outfile: string, plugins: Plugin[] = []): Promise<void> {
  await build({
    plugins,
    entryPoints: [entry],
    outfile,
    allowOverwrite: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: NATIVE,
    // CommonJS code in an ES module bundle calls require() for the native addon and Node's modules.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);" },
    legalComments: 'none',
    logLevel: 'error',
  });
}

export async function bundleDist(root = packageRoot()): Promise<string[]> {
  const dist = join(root, 'dist');
  const made: string[] = [];
  for (const f of readdirSync(join(root, 'src', 'vendor')).filter((n) => n.endsWith('.ts'))) {
    const out = join('src', 'vendor', f.replace(/\.ts$/, '.js'));
    await bundle(join(root, 'src', 'vendor', f), join(dist, out));
    rmSync(join(dist, `${out}.map`), { force: true }); // tsc's map is of the re-exports, not of the bundle
    made.push(out);
  }
  // Last, so it is newer than every file of the build.
  await bundle(join(dist, 'src', 'cli', 'bundle-main.js'), join(dist, CLI_BUNDLE), [vendorSources(root)]);
  made.push(CLI_BUNDLE);
  return made;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const made = await bundleDist();
  process.stdout.write(`one-file modules made in dist/: ${made.join(', ')}\n`);
}
