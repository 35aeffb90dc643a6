// The viewer in headless Chromium (Debian's package) against a real server: how long a trace of N
// spans takes to show its tree (first row in the DOM, from navigation start), how long its span
// skeleton takes to arrive, how many rows the DOM holds, how long End takes to show the last span's
// detail, and how long a traces table takes to show its first page. Median (min-max) of --runs
// after one warm-up.
//
//   node --import tsx bench/viewer.ts [--sizes 5000,20000] [--runs 5]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildUi } from '../scripts/build-ui.js';
import { TraceStore } from '../src/engine/trace-store.js';
import { buildServer } from '../src/server/build-server.js';
import { routeUrl, runTable } from '../src/ui/lib/routes.js';
import { chromiumPath, launch, newPage, signIn } from '../test/support/browser.js';
import { jsonCaller, type ServerFixture } from '../test/support/helpers.js';
import { logBigTrace } from '../test/support/viewer-data.js';

declare const window: any, document: any, MutationObserver: any;

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '5000,20000' }, runs: { type: 'string', default: '5' } } });
const sizes = values.sizes.split(',').map(Number);
const runs = Number(values.runs);
if (!chromiumPath) throw new Error("no Chromium: install Debian's chromium package or set TRACELAKE_CHROMIUM");

const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s[s.length - 1]! };
};
const fmt = (xs: number[]) => {
  const { median, min, max } = stat(xs);
  return `${median.toFixed(0)} (${min.toFixed(0)}–${max.toFixed(0)})`;
};

const dir = mkdtempSync(join(tmpdir(), 'tracelake-bench-viewer-'));
const store = await TraceStore.open(join(dir, 'data'));
const built = await buildUi(join(dir, 'ui'));
const user = store.users.create({ email: 'bench@localhost', role: 'admin' });
const key = store.users.createApiKey(user.id).key;
const project = store.createProject({ name: 'bench' });
const stream = store.createLogStream(project.id, 'default');
const app = buildServer({ store, viewer: { dir: built.dir } });
const url = await app.listen({ port: 0, host: '127.0.0.1' });
const fx = { url, key, projectId: project.id, logStreamId: stream.id, store, call: jsonCaller(url, key) } as unknown as ServerFixture;
const browser = await launch();
const { page } = await newPage(browser);
await page.addInitScript(() => {
  window.__treeAt = null;
  window.__completeAt = null;
  new MutationObserver((_: unknown, o: { disconnect(): void }) => {
    if (window.__treeAt === null && document.querySelector('[role=treeitem]')) window.__treeAt = performance.now();
    if (document.querySelector('[role=tree][aria-busy=false] [role=treeitem]')) {
      window.__completeAt = performance.now();
      o.disconnect();
    }
  }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-busy'] });
});
await signIn(page, url, key);

const rows: string[] = [];
const results: Record<string, unknown> = {};
for (const size of sizes) {
  const traceId = await logBigTrace(fx, size);
  const traceUrl = `${url}${routeUrl({ name: 'trace', projectId: project.id, traceId, spanId: null, tab: 'overview' })}`;
  const tree: number[] = [];
  const complete: number[] = [];
  const skeleton: number[] = [];
  const end: number[] = [];
  let dom = 0;
  for (let i = 0; i <= runs; i++) {
    await page.goto(traceUrl);
    await page.waitForFunction(() => window.__completeAt !== null, undefined, { timeout: 60_000 });
    const t = await page.evaluate(() => ({
      tree: window.__treeAt as number,
      complete: window.__completeAt as number,
      skeleton: Math.max(
        ...(performance.getEntriesByType('resource') as unknown as { name: string; responseEnd: number }[])
          .filter((e) => e.name.endsWith('/spans/partial_search'))
          .map((e) => e.responseEnd),
      ),
    }));
    await page.getByRole('tree').focus();
    const t0 = Date.now();
    await page.keyboard.press('End');
    await page
      .locator('.detail-head h2')
      .filter({ hasText: `search ${size}` })
      .waitFor();
    const endMs = Date.now() - t0;
    dom = Math.max(dom, await page.locator('[role=treeitem]').count());
    if (i === 0) continue; // warm-up
    tree.push(t.tree);
    complete.push(t.complete);
    skeleton.push(t.skeleton);
    end.push(endMs);
  }
  results[`trace_${size}`] = { firstRow: stat(tree), complete: stat(complete), skeleton: stat(skeleton), end: stat(end), domRows: dom };
  rows.push(`| trace of ${size.toLocaleString('en-US')} spans: first tree rows | ${fmt(tree)} |`);
  rows.push(`| … whole tree shown | ${fmt(complete)} |`);
  rows.push(`| … its span skeleton received (all pages) | ${fmt(skeleton)} |`);
  rows.push(`| … End to the last span's detail | ${fmt(end)} |`);
  rows.push(`| … most tree rows in the DOM | ${dom} |`);
}
const table: number[] = [];
const tableUrl = `${url}${routeUrl(runTable(project.id, 'ls', stream.id))}`;
for (let i = 0; i <= runs; i++) {
  await page.goto(tableUrl);
  await page.locator('table.records tbody tr').first().waitFor();
  const ms = await page.evaluate(() => performance.now());
  if (i > 0) table.push(ms);
}
results['traces_table'] = stat(table);
rows.push(`| traces table, first page shown | ${fmt(table)} |`);

await browser.close();
await app.close();
await store.close();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `Chromium ${chromiumPath}, ${runs} runs after a warm-up; milliseconds from navigation start, median (min–max)\n\n` +
    `| measurement | ms |\n|---|---:|\n${rows.join('\n')}\n`,
);
mkdirSync(join(import.meta.dirname, 'results'), { recursive: true });
writeFileSync(
  join(import.meta.dirname, 'results', `${new Date().toISOString().slice(0, 10)}-viewer.json`),
  `${JSON.stringify({ sizes, runs, results }, null, 2)}\n`,
);
