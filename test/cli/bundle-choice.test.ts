// Guarantees: `tracelake` runs the CLI's one-file bundle only from a build and only while the bundle is
// at least as new as the build's entry (a tsc run after it leaves it stale: the modules run instead);
// `npm test`'s build leaves it current, so the suite's servers run what users run; the bundle holds
// every package but the native addon: copied beside nothing else, it serves the API and the viewer.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/binary/config.js';
import { CLI_BUNDLE, cliBundle } from '../../src/cli/bundle-choice.js';
import { VERSION } from '../../src/version.js';
import { tempDir } from '../support/helpers.js';
import { USE_DIST } from '../support/node-entry.js';
import { serveChild } from '../support/serve-child.js';

test('the bundle is chosen from a build only, while it is at least as new as the entry', (t) => {
  const pkg = tempDir(t);
  mkdirSync(join(pkg, 'dist', 'src'), { recursive: true });
  mkdirSync(join(pkg, 'src'), { recursive: true });
  const entry = join(pkg, 'dist', 'src', 'cli.js');
  const bundle = join(pkg, 'dist', CLI_BUNDLE);
  writeFileSync(entry, '');
  writeFileSync(join(pkg, 'src', 'cli.js'), '');
  assert.equal(cliBundle(entry), null, 'no bundle');
  writeFileSync(bundle, '');
  const at = (file: string, s: number) => utimesSync(file, s, s);
  at(entry, 1_000);
  at(bundle, 2_000);
  assert.equal(cliBundle(entry), bundle, 'newer than the entry');
  at(bundle, 1_000);
  assert.equal(cliBundle(entry), bundle, 'as new');
  at(bundle, 999);
  assert.equal(cliBundle(entry), null, 'older: the build changed since');
  at(bundle, 2_000);
  assert.equal(cliBundle(join(pkg, 'src', 'cli.js')), null, 'not a build');
  assert.equal(cliBundle(join(pkg, 'src', 'cli.ts')), null, 'sources');
  process.env['TRACELAKE_NO_BUNDLE'] = '1';
  t.after(() => delete process.env['TRACELAKE_NO_BUNDLE']);
  assert.equal(cliBundle(entry), null, 'TRACELAKE_NO_BUNDLE=1 runs the modules');
});

test("the build's bundle is current, and runs the server with no package but the native addon beside it", async (t) => {
  const bundle = join(ROOT, 'dist', CLI_BUNDLE);
  const current = existsSync(join(ROOT, 'dist', 'src', 'cli.js')) && cliBundle(join(ROOT, 'dist', 'src', 'cli.js')) === bundle;
  if (USE_DIST) assert.ok(current, 'npm test builds the bundle after tsc');
  else if (!current) return; // through tsx after an edit: no current build to check
  // A package folder holding the bundle, the runtime files and, of node_modules, DuckDB's addon only:
  // a package the bundle failed to hold cannot be found there (no node_modules above a temp folder).
  const pkg = tempDir(t);
  mkdirSync(join(pkg, 'dist'));
  mkdirSync(join(pkg, 'node_modules', '@duckdb'), { recursive: true });
  copyFileSync(bundle, join(pkg, 'dist', CLI_BUNDLE));
  copyFileSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  for (const entry of ['data', 'vendor', 'dist/ui', 'dist/docs-ui']) symlinkSync(join(ROOT, entry), join(pkg, entry));
  for (const addon of readdirSync(join(ROOT, 'node_modules', '@duckdb')).filter((n) => n.startsWith('node-bindings')))
    symlinkSync(join(ROOT, 'node_modules', '@duckdb', addon), join(pkg, 'node_modules', '@duckdb', addon));
  const copy = join(pkg, 'dist', CLI_BUNDLE);
  const version = spawnSync(process.execPath, [copy, '--version'], { encoding: 'utf8' });
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim(), VERSION);
  const key = 'tl-bundle-test-key-0123456789abcdefghij';
  const { url } = await serveChild(t, join(pkg, 'data-dir'), [], { TRACELAKE_API_KEY: key }, [copy]);
  const headers = { 'Galileo-API-Key': key, 'content-type': 'application/json' };
  const made = await fetch(`${url}/projects`, { method: 'POST', headers, body: JSON.stringify({ name: 'from the bundle' }) });
  assert.equal(made.status, 200, await made.clone().text());
  const list = (await (await fetch(`${url}/projects`, { headers })).json()) as { name: string }[];
  assert.deepEqual(
    list.map((p) => p.name),
    ['from the bundle'],
  );
  const page = await fetch(`${url}/ui/`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<html/i);
});
