// Guarantees: the packages src/vendor/ holds are imported through it only (one copy per process), and
// the build makes each vendor file one module holding its package (scripts/bundle-dist.ts) whose names
// work: TypeBox compiles and checks, DuckDB runs a query with a list value.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../../scripts/binary/config.js';
import { sourceFiles } from '../support/import-graph.js';
import { USE_DIST } from '../support/node-entry.js';

const VENDOR = join(ROOT, 'src', 'vendor');

/** The packages each src/vendor file re-exports (read from its own `from '...'` specifiers). */
function vendored(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of readdirSync(VENDOR).filter((n) => n.endsWith('.ts'))) {
    const specs = [...readFileSync(join(VENDOR, f), 'utf8').matchAll(/from '([^'.][^']*)'/g)].map((m) => m[1]!);
    out.set(f.replace(/\.ts$/, '.js'), [...new Set(specs)]);
  }
  return out;
}

test('the vendored packages are imported through src/vendor only', () => {
  const packages = [...vendored().values()].flat().map((s) => (s.split('/')[0] === '@duckdb' ? s : s.split('/')[0]!));
  assert.ok(packages.includes('typebox') && packages.includes('@duckdb/node-api'), `read ${packages.join(', ')}`);
  const offenders: string[] = [];
  for (const dir of ['src', 'test', 'bench', 'scripts']) {
    for (const file of sourceFiles(join(ROOT, dir), (p) => ['node_modules', 'ui'].includes(basename(p)) || p === VENDOR)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:from\s+|import\()'([^']+)'/g)) {
        const spec = m[1]!;
        if (packages.some((p) => spec === p || spec.startsWith(`${p}/`))) offenders.push(`${relative(ROOT, file)}: ${spec}`);
      }
    }
  }
  assert.deepEqual(offenders, []);
});

test('the built vendor files hold their packages and import none of them', () => {
  const dist = join(ROOT, 'dist', 'src', 'vendor');
  if (!USE_DIST && !existsSync(dist)) return; // run through tsx without a build: nothing built to check
  for (const [file, specs] of vendored()) {
    const text = readFileSync(join(dist, file), 'utf8');
    for (const spec of specs) {
      assert.ok(
        !text.includes(`'${spec}'`) && !text.includes(`"${spec}"`),
        `${file} still imports ${spec}: run scripts/bundle-dist.ts after tsc`,
      );
    }
    assert.ok(text.length > 100_000, `${file} is ${text.length} bytes: not a bundle`);
  }
});

test("the vendor modules' names work: TypeBox compiles and checks, DuckDB runs a query with a list", async () => {
  const at = (f: string) =>
    pathToFileURL(join(USE_DIST ? join(ROOT, 'dist', 'src', 'vendor') : VENDOR, USE_DIST ? f : f.replace(/\.js$/, '.ts'))).href;
  const tb = (await import(at('typebox.js'))) as typeof import('../../src/vendor/typebox.js');
  const schema = tb.Type.Object({ name: tb.Type.String(), n: tb.Type.Integer({ minimum: 0 }) });
  const check = tb.Compile(schema);
  assert.equal(check.Check({ name: 'a', n: 1 }), true);
  assert.equal(check.Check({ name: 'a', n: -1 }), false);
  assert.equal(tb.Value.Check(schema, { name: 2, n: 1 }), false);
  const duck = (await import(at('duckdb.js'))) as typeof import('../../src/vendor/duckdb.js');
  const db = await duck.DuckDBInstance.create(':memory:');
  const con = await db.connect();
  try {
    const reader = await con.runAndReadAll('SELECT len($1::VARCHAR[]) AS n', [duck.listValue(['a', 'b', 'c'])]);
    assert.equal(Number(reader.getRowObjects()[0]!['n']), 3);
  } finally {
    con.closeSync();
    db.closeSync();
  }
});
