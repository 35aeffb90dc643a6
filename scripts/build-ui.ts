// Builds the browser viewer (src/ui) into dist/ui: one minified ES module and one stylesheet, both
// named by a content hash so the server can cache them for good, plus index.html that names them.
// Run by `npm run build` (and so by `npm install`, through `prepare`); tests call buildUi() directly
// so they always exercise the current sources.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: the nearest folder above this file holding tracelake's package.json. */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'tracelake') return dir;
    if (dirname(dir) === dir) throw new Error(`no tracelake package.json above ${from}`);
  }
}

export interface UiBuild {
  dir: string;
  script: string;
  stylesheet: string;
  /** Minified bytes of the script and the stylesheet. */
  bytes: { script: number; stylesheet: number };
}

export async function buildUi(outDir = join(packageRoot(), 'dist', 'ui')): Promise<UiBuild> {
  const src = join(packageRoot(), 'src', 'ui');
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(src, 'main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['chrome110', 'firefox110', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    entryNames: '[name]-[hash]',
    outdir: outDir,
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.endsWith('.js'));
  const stylesheet = outputs.find((f) => f.endsWith('.css'));
  if (!script || !stylesheet) throw new Error(`viewer build produced ${outputs.join(', ')}`);
  const html = readFileSync(join(src, 'index.html'), 'utf8')
    .replace('%SCRIPT%', `/ui/${script}`)
    .replace('%STYLESHEET%', `/ui/${stylesheet}`);
  writeFileSync(join(outDir, 'index.html'), html);
  writeFileSync(join(outDir, 'favicon.svg'), readFileSync(join(src, 'favicon.svg')));
  const size = (f: string) => readFileSync(join(outDir, f)).length;
  return { dir: outDir, script, stylesheet, bytes: { script: size(script), stylesheet: size(stylesheet) } };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const out = await buildUi(process.argv[2]);
  process.stdout.write(`viewer built into ${out.dir}: ${readdirSync(out.dir).join(', ')} (script ${out.bytes.script} bytes)\n`);
}
