// Guarantees the habits the formatter cannot keep: no line of src/, test/, bench/ or scripts/ is longer
// than 160 characters (Biome wraps code at 140 but leaves comments and string literals alone), src/
// never cites documents that are not in the repository (SPEC.md, COMPAT.md: a reader cannot follow
// them; the fact itself belongs in the comment), and src/ comments name no issue numbers (the code says
// why, the history says when). Each check is shown to fail on a small text that breaks it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..').replace(/\/dist\/?$/, '');
const MAX_LINE = 160;
/** Generated or third-party trees: results written by benchmarks, the test-only packages, test output. */
const SKIP = new Set(['bench/results', 'test/deps', 'test/artifacts', 'node_modules']);
const SOURCE = /\.(ts|tsx|mjs)$/;

/** Source files under `dir` (relative to the root, '/'-separated), skipping the generated trees. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (SKIP.has(rel) || e.name === 'node_modules') continue;
    if (e.isDirectory()) out.push(...sourceFiles(rel));
    else if (SOURCE.test(e.name)) out.push(rel);
  }
  return out;
}

/** `line: length` of each line over MAX_LINE characters (code points, as an editor counts them). */
export function longLines(text: string): string[] {
  const out: string[] = [];
  text.split('\n').forEach((line, i) => {
    const n = [...line].length;
    if (n > MAX_LINE) out.push(`${i + 1}: ${n}`);
  });
  return out;
}

/** Lines that cite the research documents kept outside the repository. */
export function outsideCitations(text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => [i + 1, line] as const)
    .filter(([, line]) => /\b(SPEC|COMPAT)\.md\b/.test(line))
    .map(([n]) => String(n));
}

/** Comment lines (or trailing comments) that name an issue by number. */
export function issueNumbers(text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => [i + 1, line] as const)
    .filter(([, line]) => /(\/\/|^\s*\*|\/\*).*\bissues? #?\d+/i.test(line))
    .map(([n]) => String(n));
}

const offenders = (files: string[], check: (text: string) => string[]): string[] =>
  files.flatMap((f) => check(readFileSync(join(ROOT, f), 'utf8')).map((where) => `${f}:${where}`));

test('the checks fail on text that breaks them', () => {
  assert.deepEqual(longLines(`short\n${'x'.repeat(MAX_LINE)}\n${'y'.repeat(MAX_LINE + 1)}`), [`3: ${MAX_LINE + 1}`]);
  // Characters, not bytes: 160 accented letters are one line at the limit.
  assert.deepEqual(longLines('é'.repeat(MAX_LINE)), []);
  assert.deepEqual(outsideCitations('// fine\n// as COMPAT.md 3.7 says\nconst s = "see SPEC.md";'), ['2', '3']);
  assert.deepEqual(outsideCitations('// the spec says so; compat.mdx is another file'), []);
  assert.deepEqual(issueNumbers('// (issue 17, counts)\n * see issue #5\nconst issue = 3; // issues 4 and 5\nconst name = "issue 1";'), [
    '1',
    '2',
    '3',
  ]);
});

test(`no line over ${MAX_LINE} characters in src/, test/, bench/ and scripts/`, () => {
  const files = ['src', 'test', 'bench', 'scripts'].flatMap(sourceFiles);
  assert.ok(files.length > 100 && files.includes('test/habits.test.ts'), `the walk found the sources (${files.length})`);
  assert.deepEqual(offenders(files, longLines), [], 'rewrap the comment, or split the string with + (same text)');
});

test('src/ cites no document outside the repository and names no issue numbers in comments', () => {
  const files = sourceFiles('src');
  assert.ok(
    files.some((f) => relative('src', f).startsWith('storage/')),
    'the walk found src/',
  );
  assert.deepEqual(offenders(files, outsideCitations), [], 'state the fact SPEC.md / COMPAT.md held instead of citing them');
  assert.deepEqual(offenders(files, issueNumbers), [], 'say why the code is so instead of naming the issue');
});
