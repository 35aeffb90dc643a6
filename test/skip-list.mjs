// The documented skips (the table between the skip-list markers in docs/testing.md) and whether each
// skip a run reports is allowed on this machine: it must be listed (file and test name) and its
// condition must hold here. Used by test/run.mjs after the run. A condition that does not hold makes
// the skip a failure: a root-only test that skips as root, a browser test that skips with Chromium
// installed. TRACELAKE_NO_SKIPS=1 (.ci/run) allows none at all.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const START = '<!-- skip-list:start -->';
const END = '<!-- skip-list:end -->';

/** The listed skips: { file, name, when, why }. Throws when the table is missing or malformed. */
export function readSkipList(root) {
  const doc = readFileSync(join(root, 'docs', 'testing.md'), 'utf8');
  const from = doc.indexOf(START);
  const to = doc.indexOf(END);
  if (from < 0 || to < from) throw new Error(`docs/testing.md has no skip list (between ${START} and ${END})`);
  const rows = doc
    .slice(from + START.length, to)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('|') && !/^\|\s*(File|-+)\s*\|/.test(l));
  return rows.map((line) => {
    const cells = line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim());
    if (cells.length !== 4) throw new Error(`docs/testing.md skip list: a row needs 4 cells (file, test, skips when, why): ${line}`);
    const [file, name, when, why] = cells.map((c) => c.replace(/^`(.*)`$/, '$1'));
    if (!CONDITIONS[when])
      throw new Error(`docs/testing.md skip list: unknown condition "${when}" (known: ${Object.keys(CONDITIONS).join(', ')})`);
    if (!why) throw new Error(`docs/testing.md skip list: no reason given for ${file}: ${name}`);
    return { file, name, when, why };
  });
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

// The same places test/support/browser.ts looks for Chromium (TRACELAKE_CHROMIUM first, alone).
const chromiumCandidates = () =>
  process.env['TRACELAKE_CHROMIUM']
    ? [process.env['TRACELAKE_CHROMIUM']]
    : ['/usr/bin/chromium', '/usr/lib/chromium/chromium', '/usr/bin/chromium-browser'];

function postgresFound() {
  const pg = process.env['TRACELAKE_PG_BIN'];
  if (pg && existsSync(join(pg, 'initdb'))) return true;
  const base = '/usr/lib/postgresql';
  if (existsSync(base) && readdirSync(base).some((v) => existsSync(join(base, v, 'bin', 'initdb')))) return true;
  return (process.env['PATH'] ?? '').split(':').some((d) => d && existsSync(join(d, 'initdb')));
}

/** Conditions a listed skip may name; each is true where the skip is expected. */
export const CONDITIONS = {
  'not-root': () => !isRoot(),
  // Neither as root nor in a user namespace (unshare -r) can a mount or pid namespace be had here
  // (test/support/user-namespace.ts asks the same way).
  'no-namespaces': () =>
    [['-m'], ['-pf', '--mount-proc']].some((flags) => spawnSync('unshare', [...(isRoot() ? [] : ['-r']), ...flags, 'true']).status !== 0),
  'no-chromium': () => !process.env['CI'] && !process.env['TRACELAKE_REQUIRE_BROWSER'] && !chromiumCandidates().some((p) => existsSync(p)),
  'no-postgres': () => !postgresFound(),
  // The Iceberg readers' test-only packages (test/deps, installed by .ci/run, left out of npm install).
  'no-test-deps': () =>
    ['chdb', 's3rver'].some((p) => !existsSync(fileURLToPath(new URL(`./deps/node_modules/${p}/package.json`, import.meta.url)))),
  'not-linux-x64': () =>
    process.platform !== 'linux' || process.arch !== 'x64' || !process.report?.getReport()?.header?.glibcVersionRuntime,
};

/** The test file a reported path names, as test/... .ts (runs from dist/ report dist/test/... .js). */
export function sourceFile(root, reported) {
  const rel = relative(root, reported.startsWith('file://') ? new URL(reported).pathname : reported);
  return rel.startsWith('dist/') ? rel.slice(5).replace(/\.js$/, '.ts') : rel;
}

/**
 * Splits the reported skips (JSON lines of test/skip-reporter.mjs) into those the list allows here and
 * those it does not, each with the reason to print.
 */
export function judgeSkips(root, lines, list, noSkips) {
  const allowed = [];
  const refused = [];
  for (const s of lines) {
    const file = sourceFile(root, s.file);
    const label = `${file}: ${s.name} (${s.kind}: ${s.reason})`;
    // A test may be listed under several conditions (any that holds allows the skip).
    const entries = list.filter((e) => e.file === file && e.name === s.name);
    const entry = entries.find((e) => CONDITIONS[e.when]());
    if (noSkips) refused.push(`${label}: TRACELAKE_NO_SKIPS=1 allows no skip`);
    else if (entries.length === 0) refused.push(`${label}: not on the skip list in docs/testing.md`);
    else if (!entry)
      refused.push(
        `${label}: listed for ${entries.map((e) => `\`${e.when}\``).join(', ')}, ${entries.length === 1 ? 'which does not hold' : 'none of which holds'} here`,
      );
    else allowed.push(`${label}: listed (${entry.when}: ${entry.why})`);
  }
  return { allowed, refused };
}
