// esbuild: src/binary/entry.ts and everything it imports -> one CommonJS file (SEA runs CommonJS and
// its require() loads built-in modules only). @duckdb/node-bindings is swapped for a loader of the
// unpacked addon, and any use of import.meta outside src/assets.ts fails the build: it is empty in
// this bundle, which once silently broke the version and the scorer presets.
import { build, type Message, type Plugin } from 'esbuild';
import { join, relative } from 'node:path';
import { NODE_BASE, ROOT } from './config.js';

const duckdbFromCache: Plugin = {
  name: 'duckdb-addon-from-cache',
  setup(b) {
    b.onResolve({ filter: /^@duckdb\/node-bindings$/ }, () => ({ path: 'duckdb-bindings', namespace: 'tracelake-native' }));
    b.onLoad({ filter: /.*/, namespace: 'tracelake-native' }, () => ({
      contents: `module.exports = require(${JSON.stringify(join(ROOT, 'src', 'binary', 'duckdb-addon.ts'))}).loadDuckDbAddon();`,
      loader: 'js',
      resolveDir: ROOT,
    }));
  },
};

const ALLOWED_IMPORT_META = [join('src', 'assets.ts')];

function where(m: Message): string {
  return m.location ? `${m.location.file}:${m.location.line}: ` : '';
}

export async function bundle(outfile: string, log: (s: string) => void): Promise<void> {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join('src', 'binary', 'entry.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${NODE_BASE.version.split('.')[0]}`,
    plugins: [duckdbFromCache],
    logLevel: 'silent',
    legalComments: 'none',
  });
  const importMeta = result.warnings.filter(
    (w) => w.id === 'empty-import-meta' && !ALLOWED_IMPORT_META.includes(relative('.', w.location?.file ?? '')),
  );
  if (importMeta.length) {
    throw new Error(
      "import.meta is empty in the single binary's bundle. Read runtime files through assetPath() from src/assets.ts " +
        `(and list them in RUNTIME_ASSETS) instead of new URL(..., import.meta.url):\n${importMeta.map((w) => `  ${where(w)}${w.text}`).join('\n')}`,
    );
  }
  for (const w of result.warnings) if (w.id !== 'empty-import-meta') log(`esbuild: ${where(w)}${w.text}`);
}
