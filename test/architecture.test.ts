// Guarantees: src/ has no import cycle and no import from a layer to a higher one; the viewer
// (src/ui) is a graph of its own, without cycles, importing nothing outside itself. Every import
// counts: static, re-exports, dynamic import() and type-only ones. The checks are shown to fail on
// small graphs with a cycle, an upward edge and a file in no layer.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cycles, importGraph, importSpecifiers, layerOf, layerViolations, type Graph, type Layers } from './support/import-graph.js';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..').replace(/\/dist\/?$/, '');

/**
 * Lowest first. The record's columns come first because every room names them (the filter compiler
 * too); the filter language (query) comes before the request schemas, which are written with its
 * operators and types; db, the DuckDB connection, comes after both, so the pure rooms cannot run SQL.
 */
export const LAYERS: Layers = [
  ['src/vendor/'],
  ['src/errors.ts', 'src/version.ts', 'src/assets.ts'],
  ['src/record/'],
  ['src/query/'],
  ['src/schemas/'],
  ['src/db/'],
  ['src/storage/'],
  ['src/catalog/'],
  ['src/ingest/'],
  ['src/query/exec/'],
  ['src/iceberg/'],
  ['src/scoring/'],
  ['src/engine/'],
  ['src/server/'],
  ['src/index.ts'],
  ['src/cli.ts', 'src/cli/', 'src/binary/'],
];

/**
 * Edges against the order that are known, each with what removes it. A listed edge that no longer
 * occurs fails the test, so the list can only shrink.
 */
const KNOWN_UPWARD: ReadonlyMap<string, string> = new Map<string, string>([]);

/** Files allowed a computed import(), each with what it loads: a build output, never a source (no edge goes unseen). */
const COMPUTED_IMPORTS: ReadonlyMap<string, string> = new Map([
  ['src/cli.ts', 'the CLI as one file, dist/tracelake.mjs (scripts/bundle-dist.ts)'],
]);

let graph: Graph | undefined;
const srcGraph = (): Graph =>
  (graph ??= importGraph(ROOT, join(ROOT, 'src'), (p) => p === join(ROOT, 'src', 'ui'), new Set(COMPUTED_IMPORTS.keys())));

test('src/ has no import cycle', () => {
  const found = cycles(srcGraph());
  assert.deepEqual(
    found.map((c) => c.join(' -> ')),
    [],
  );
});

test('every file of src/ is in a layer, and no import goes from a layer to a higher one', () => {
  const { unplaced, upward } = layerViolations(srcGraph(), LAYERS);
  assert.deepEqual(unplaced, [], 'files in no layer: add them to LAYERS');
  assert.deepEqual(
    upward.filter((e) => !KNOWN_UPWARD.has(e)),
    [],
    'imports from a lower layer to a higher one',
  );
  const gone = [...KNOWN_UPWARD.keys()].filter((e) => !upward.includes(e));
  assert.deepEqual(gone, [], 'known edges that no longer occur: remove them from KNOWN_UPWARD');
});

test('the viewer (src/ui) has no cycle and imports nothing outside src/ui', () => {
  const ui = importGraph(ROOT, join(ROOT, 'src', 'ui'));
  assert.ok(ui.size > 10, 'the viewer has its files');
  assert.deepEqual(
    cycles(ui).map((c) => c.join(' -> ')),
    [],
  );
  const outside = [...ui].flatMap(([from, to]) => [...to].filter((t) => !t.startsWith('src/ui/')).map((t) => `${from} -> ${t}`));
  assert.deepEqual(outside, []);
  // And nothing outside the viewer imports it.
  const into = [...srcGraph()].flatMap(([from, to]) => [...to].filter((t) => t.startsWith('src/ui/')).map((t) => `${from} -> ${t}`));
  assert.deepEqual(into, []);
});

test('imports are read in every form, and only relative ones are kept', () => {
  const text = [
    "import a from './a.js';",
    "import type { B } from '../b.js';",
    "import { type C, d } from './c.js';",
    "import './side-effect.js';",
    "export * from './e.js';",
    "export type { F } from './f.js';",
    "const g = await import('./g.js');",
    "type H = import('./h.js').H;",
    "import fs from 'node:fs';",
    "// import x from './in-a-comment.js';",
    'const s = "import y from \'./in-a-string.js\'";',
  ].join('\n');
  assert.deepEqual(importSpecifiers(text), ['./a.js', '../b.js', './c.js', './side-effect.js', './e.js', './f.js', './g.js', './h.js']);
  assert.throws(() => importSpecifiers('const m = "x"; await import(`./${m}.js`);'), /computed specifier/);
});

test('the checks fail on a cycle, an upward edge and a file in no layer', () => {
  const graph: Graph = new Map([
    ['src/low/a.ts', new Set(['src/low/b.ts'])],
    ['src/low/b.ts', new Set(['src/low/c.ts', 'src/high/x.ts'])],
    ['src/low/c.ts', new Set(['src/low/a.ts'])],
    ['src/high/x.ts', new Set(['src/low/a.ts'])],
    ['src/high/self.ts', new Set(['src/high/self.ts'])],
    ['src/stray.ts', new Set(['src/low/a.ts'])],
  ]);
  // b -> x -> a -> b closes a cycle across the layers as well: one component, one path reported.
  assert.deepEqual(cycles(graph), [
    ['src/high/self.ts', 'src/high/self.ts'],
    ['src/high/x.ts', 'src/low/a.ts', 'src/low/b.ts', 'src/high/x.ts'],
  ]);
  const layers: Layers = [['src/low/'], ['src/high/']];
  assert.equal(layerOf(layers, 'src/low/a.ts'), 0);
  assert.equal(layerOf(layers, 'src/lowly.ts'), undefined, 'a folder matches only below its slash');
  assert.equal(layerOf([['src/'], ['src/low/']], 'src/low/a.ts'), 1, 'the longest match wins');
  assert.deepEqual(layerViolations(graph, layers), { unplaced: ['src/stray.ts'], upward: ['src/low/b.ts -> src/high/x.ts'] });
  const acyclic: Graph = new Map([
    ['src/high/x.ts', new Set(['src/low/a.ts'])],
    ['src/low/a.ts', new Set<string>()],
  ]);
  assert.deepEqual(cycles(acyclic), []);
  assert.deepEqual(layerViolations(acyclic, layers), { unplaced: [], upward: [] });
});

test('the walker follows files on disk, .js specifiers to .ts sources', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tl-graph-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'src', 'sub'), { recursive: true });
  writeFileSync(join(dir, 'src', 'a.ts'), "import type { B } from './sub/b.js';\nexport const a = 1;\n");
  writeFileSync(join(dir, 'src', 'sub', 'b.ts'), "export type B = number;\nexport const load = () => import('../a.js');\n");
  writeFileSync(join(dir, 'src', 'sub', 'c.tsx'), "import './style.css';\nimport { a } from '../a.js';\nexport const c = a;\n");
  const graph = importGraph(dir, join(dir, 'src'));
  assert.deepEqual(
    [...graph].map(([f, to]) => [f, [...to]]),
    [
      ['src/a.ts', ['src/sub/b.ts']],
      ['src/sub/b.ts', ['src/a.ts']],
      ['src/sub/c.tsx', ['src/a.ts']],
    ],
  );
  assert.deepEqual(cycles(graph), [['src/a.ts', 'src/sub/b.ts', 'src/a.ts']]);
  writeFileSync(join(dir, 'src', 'sub', 'd.ts'), "import { gone } from './missing.js';\n");
  assert.throws(() => importGraph(dir, join(dir, 'src')), /src\/sub\/d\.ts: cannot resolve \.\/missing\.js/);
});
