// Runs every test file (test/**/*.test.ts) with node:test.
// Usage: node test/run.mjs [substring-filter ...]
//
// A run fails when a test fails, and also when a test skips (or is marked todo) unless the skip is on
// the list in docs/testing.md with a condition that holds on this machine (test/skip-list.mjs);
// TRACELAKE_NO_SKIPS=1 fails on any skip. The skips are read from node:test's events by a second
// reporter (test/skip-reporter.mjs) writing to a file of its own.
//
// When dist/ (tsc's output of src, test, scripts and bench: `npm test` and `npm install` write it) is
// newer than every source file, the compiled test files run from dist/ and the children they start do
// too (TRACELAKE_TEST_DIST=1, see test/support/node-entry.ts): tsx costs about a second of CPU per
// process, and the suite starts some hundreds. Otherwise everything goes through tsx, as before, so an
// edit made since the last build is always what runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { judgeSkips, readSkipList } from './skip-list.mjs';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const walk = (dir, out) => {
  for (const name of readdirSync(dir).sort()) {
    // Installed packages (test/deps/node_modules) are neither tests nor sources of ours.
    if (name === 'node_modules') continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(relative(root, p));
  }
  return out;
};
const files = walk(join(root, 'test'), []).filter((f) => f.endsWith('.test.ts'));
const filters = process.argv.slice(2);
const selected = filters.length ? files.filter((f) => filters.some((x) => f.includes(x))) : files;
if (selected.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

const compiled = (f) => join('dist', f.replace(/\.ts$/, '.js'));
/** The first source file whose compiled copy is missing or older, or undefined when dist/ is current. */
function staleSource() {
  for (const dir of ['src', 'test', 'scripts', 'bench']) {
    for (const f of walk(join(root, dir), [])) {
      if (!f.endsWith('.ts') || f.endsWith('.d.ts')) continue;
      const out = join(root, compiled(f));
      // The viewer's own files (src/ui) are bundled by esbuild, not tsc; tsc compiles only those a test imports.
      if (!existsSync(out)) {
        if (f.startsWith(join('src', 'ui'))) continue;
        return f;
      }
      if (statSync(out).mtimeMs < statSync(join(root, f)).mtimeMs) return f;
    }
  }
  return undefined;
}
const stale = process.env['TRACELAKE_TEST_TSX'] === '1' ? 'TRACELAKE_TEST_TSX=1' : staleSource();
const dist = stale === undefined;
if (!dist)
  console.error(`test/run.mjs: running through tsx (dist/ is not current: ${stale}); \`npx tsc -p tsconfig.json\` makes the run faster`);
// Every server a test starts (in process or as a child) checks its answers against the OpenAPI document.
const env = { ...process.env, TRACELAKE_CHECK_CONTRACT: '1', TRACELAKE_TEST_DIST: dist ? '1' : '0' };
// Read before the run: a malformed list fails at once, not after ten minutes.
const skipList = readSkipList(root);
const scratch = mkdtempSync(join(tmpdir(), 'tracelake-run-'));
const skipFile = join(scratch, 'skips.jsonl');
const reporters = [
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-reporter=${join(root, 'test', 'skip-reporter.mjs')}`,
  `--test-reporter-destination=${skipFile}`,
];
const args = dist
  ? ['--enable-source-maps', '--test', ...reporters, ...selected.map(compiled)]
  : ['--import', 'tsx', '--test', ...reporters, ...selected];
const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env });
const reported = existsSync(skipFile)
  ? readFileSync(skipFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
rmSync(scratch, { recursive: true, force: true });
const { allowed, refused } = judgeSkips(root, reported, skipList, process.env['TRACELAKE_NO_SKIPS'] === '1');
if (allowed.length)
  console.log(
    `\ntest/run.mjs: ${allowed.length} skip${allowed.length === 1 ? '' : 's'} on the documented list for this machine:\n  ${allowed.join('\n  ')}`,
  );
if (refused.length)
  console.error(
    `\ntest/run.mjs: ${refused.length} skip${refused.length === 1 ? '' : 's'} not allowed here (a skipped test proves nothing):\n  ${refused.join('\n  ')}`,
  );
console.log(`test/run.mjs: ${reported.length} skipped or todo (${allowed.length} allowed, ${refused.length} not)`);
process.exit(result.status === 0 && refused.length === 0 ? 0 : result.status || 1);
