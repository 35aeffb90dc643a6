// Guarantees a user in a real browser sees a run's overview drawn from the aggregate API: the same
// buckets and numbers the API answers (traces, latency, tokens and cost by model, a scorer metric),
// values on hover, a click on a bucket opening the table filtered to it (the filter shown), and a
// time range kept in the URL; and two runs compared side by side with the API's numbers, the
// differences marked.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { formatDuration, formatNumber } from '../../../src/ui/lib/format.js';
import { routeUrl, type Route } from '../../../src/ui/lib/routes.js';
import { ARTIFACTS, browserSkip, newPage, shot, signIn } from '../../support/browser.js';
import { harness, text, until, type Harness } from './support.js';

const skip = browserSkip();
const MODELS = ['gpt-4o', 'gpt-4o-mini'];

/** Hours 06, 07, 09, 10 and 11 of a day long past hold traces; 08 none. `slower` doubles latencies and uses one model. */
function traces(slower = false): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let i = 0;
  for (const hour of [6, 7, 9, 10, 11]) {
    for (let k = 0; k < 3 + hour; k++, i++) {
      const at = new Date(Date.UTC(2026, 10, 10, hour, k * 4, 7)).toISOString();
      out.push({
        name: `q${i}`,
        input: `question ${i}`,
        output: 'answer',
        created_at: at,
        metrics: { duration_ns: (200 + ((i * 53) % 700)) * 1e6 * (slower ? 2 : 1), helpfulness: (i % 5) / 4 },
        spans: [
          {
            type: 'llm',
            name: 'chat',
            input: 'x',
            created_at: at,
            model: slower ? 'gpt-4o' : MODELS[i % 2],
            status_code: i % 7 === 0 ? 500 : 200,
            metrics: { num_input_tokens: 100 + i, num_output_tokens: 20 + (i % 9), duration_ns: 150e6 },
          },
        ],
      });
    }
  }
  return out;
}

describe('a run overview in Chromium', { skip }, () => {
  let h: Harness;
  let page: Page;
  let errors: string[];
  let canary: string;
  const overview = (range: Extract<Route, { name: 'overview' }>['range'] = { kind: 'all' }): Route => ({
    name: 'overview',
    projectId: h.fx.projectId,
    runKind: 'ls',
    runId: h.fx.logStreamId,
    range,
  });
  const aggregate = async (level: string, body: Record<string, unknown>, run?: string) => {
    const r = await h.fx.call('POST', `/v2/projects/${h.fx.projectId}/${level}/aggregate`, {
      log_stream_id: run ?? h.fx.logStreamId,
      ...body,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body as { rows: Record<string, any>[]; interval: string };
  };
  const readout = (chart: string) => text(page, `figure[data-chart="${chart}"] .chart-readout`);
  const hoverBucket = async (chart: string, bucket: string) => {
    await page.locator(`figure[data-chart="${chart}"] rect.chart-hit[data-bucket="${bucket}"]`).hover({ force: true });
  };

  before(async () => {
    h = await harness();
    h.fx.store.catalog.renameRun(h.fx.projectId, h.fx.logStreamId, 'production');
    const r = await h.fx.call('POST', `/v2/projects/${h.fx.projectId}/traces`, { log_stream_id: h.fx.logStreamId, traces: traces() });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    canary = h.fx.store.createLogStream(h.fx.projectId, 'canary').id;
    const c = await h.fx.call('POST', `/v2/projects/${h.fx.projectId}/traces`, {
      log_stream_id: canary,
      traces: traces(true).slice(0, 40),
    });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    ({ page, errors } = await newPage(h.browser));
    await signIn(page, h.fx.url, h.fx.key);
  });
  after(async () => h?.close());

  test('the run page links to the overview; its charts show the API’s buckets and numbers', async () => {
    await page.goto(`${h.fx.url}/ui/p/${h.fx.projectId}`);
    await page
      .getByRole('row', { name: /production/ })
      .getByRole('link', { name: 'overview' })
      .click();
    await page.locator('figure[data-chart="Traces"] svg').waitFor();
    assert.equal(new URL(page.url()).pathname, routeUrl(overview()));

    const api = await aggregate('traces', {
      group_by: [{ column_id: 'created_at', interval: 'auto' }],
      measures: [{ op: 'count' }, { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95' }],
    });
    assert.equal(api.interval, '5m', 'six hours in at most 300 buckets');
    const buckets = await page
      .locator('figure[data-chart="Traces"] rect.chart-hit')
      .evaluateAll((rs) => rs.map((r) => r.getAttribute('data-bucket')));
    assert.deepEqual(
      buckets,
      api.rows.map((r) => r['created_at']),
      'one bucket per row of the API, the empty ones too',
    );
    const total = api.rows.reduce((a, r) => a + r['count'], 0);
    assert.equal(await text(page, '[data-total="traces"]'), String(total));

    const busy = api.rows.find((r) => r['count'] > 0)!;
    await hoverBucket('Traces', busy['created_at']);
    await until(
      async () => (await readout('Traces')).endsWith(`traces ${busy['count']}`) || (await readout('Traces')),
      'hover shows the count',
    );
    await hoverBucket('Latency', busy['created_at']);
    await until(
      async () => (await readout('Latency')).includes(`p95 ${formatDuration(busy['p95'])}`) || (await readout('Latency')),
      'hover shows the p95 the API computes',
    );

    // Tokens by model: each model's input + output tokens in the bucket, as the API sums them.
    const models = await aggregate('spans', {
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
      group_by: ['model'],
      measures: [
        { op: 'sum', column_id: 'metrics/num_input_tokens', alias: 'in' },
        { op: 'sum', column_id: 'metrics/num_output_tokens', alias: 'out' },
      ],
    });
    const tokens = models.rows.reduce((a, r) => a + r['in'] + r['out'], 0);
    assert.equal(await text(page, '[data-total="tokens"]'), tokens.toLocaleString('en-US'));
    const legend = await readout('Tokens by model');
    for (const m of MODELS) assert.ok(legend.includes(m), `the legend names ${m}: ${legend}`);
    // The scorer metric logged on traces gets its average over time and its distribution: ten bars
    // from its least value (0) to its greatest (1), each counting the traces within it.
    await page.locator('figure[data-chart="Average helpfulness"]').waitFor();
    const dist = 'Distribution of helpfulness';
    const bins = await page
      .locator(`figure[data-chart="${dist}"] rect.chart-hit`)
      .evaluateAll((rs) => rs.map((r) => r.getAttribute('data-bucket')));
    assert.deepEqual(bins, ['0–0.1', '0.1–0.2', '0.2–0.3', '0.3–0.4', '0.4–0.5', '0.5–0.6', '0.6–0.7', '0.7–0.8', '0.8–0.9', '0.9–1']);
    const values = traces().map((t) => (t['metrics'] as { helpfulness: number }).helpfulness);
    const within = (lo: number, hi: number, last = false) => values.filter((v) => v >= lo && (last ? v <= hi : v < hi)).length;
    for (const [bin, want] of [
      ['0–0.1', within(0, 0.1)],
      ['0.2–0.3', within(0.2, 0.3)],
      ['0.3–0.4', 0],
      ['0.9–1', within(0.9, 1, true)],
    ] as const) {
      await hoverBucket(dist, bin);
      await until(async () => (await readout(dist)) === `${bin}: traces ${want}` || (await readout(dist)), `${bin} holds ${want}`);
    }
    assert.ok(within(0.9, 1, true) > 0, 'the greatest value is in the last bar');
    await shot(page, 'overview');
    // The whole page, for the README (copied to docs/images by hand when the overview changes).
    await page.screenshot({ path: join(ARTIFACTS, 'overview-full.png'), fullPage: true });
  });

  test('a chart saves its data as CSV and itself as SVG and PNG, styled as on the page', async () => {
    await page.goto(`${h.fx.url}${routeUrl(overview())}`);
    const figure = page.locator('figure[data-chart="Traces"]');
    await figure.locator('svg').waitFor();
    const save = async (button: string) => {
      const [d] = await Promise.all([page.waitForEvent('download'), figure.getByRole('button', { name: button, exact: true }).click()]);
      return { name: d.suggestedFilename(), bytes: readFileSync((await d.path())!) };
    };
    const api = await aggregate('traces', { group_by: [{ column_id: 'created_at', interval: 'auto' }], measures: [{ op: 'count' }] });
    const csv = await save('CSV');
    assert.equal(csv.name, 'traces.csv');
    const lines = csv.bytes.toString().trim().split('\n');
    assert.equal(lines[0], 'bucket,traces');
    assert.deepEqual(
      lines.slice(1),
      api.rows.map((r) => `${r['created_at']},${r['count']}`),
      'one line per bucket of the API, its count',
    );

    const svg = await save('SVG');
    assert.equal(svg.name, 'traces.svg');
    const markup = svg.bytes.toString();
    assert.ok(markup.startsWith('<svg'), markup.slice(0, 40));
    assert.match(markup, /class="chart-axis"[^>]*style="[^"]*fill: rgb\(/, 'axis labels carry their colour without the stylesheet');
    assert.ok(!markup.includes('chart-hit'), 'no hover targets in the file');

    const png = await save('PNG');
    assert.equal(png.name, 'traces.png');
    assert.equal(png.bytes.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'a PNG file');
    assert.equal(png.bytes.readUInt32BE(16), 1280, 'twice the chart’s width');
    assert.equal(png.bytes.readUInt32BE(20), 400, 'twice its height');
    // Not blank: the image data (IDAT chunks, inflated) holds many colours' bytes.
    const chunks: Buffer[] = [];
    for (let at = 8; at < png.bytes.length; ) {
      const length = png.bytes.readUInt32BE(at);
      if (png.bytes.toString('latin1', at + 4, at + 8) === 'IDAT') chunks.push(png.bytes.subarray(at + 8, at + 8 + length));
      at += 12 + length;
    }
    const pixels = inflateSync(Buffer.concat(chunks));
    assert.ok(new Set(pixels).size > 20, `drawn, not one flat colour (${new Set(pixels).size} byte values)`);
    await writeFile(join(ARTIFACTS, 'overview-traces-export.png'), png.bytes);
    assert.deepEqual(errors, []);
  });

  test('clicking a bucket opens the traces table filtered to it, the filter shown', async () => {
    await page.goto(`${h.fx.url}${routeUrl(overview())}`);
    await page.locator('figure[data-chart="Traces"] svg').waitFor();
    const api = await aggregate('traces', { group_by: [{ column_id: 'created_at', interval: '5m' }], measures: [{ op: 'count' }] });
    const busy = api.rows.filter((r) => r['count'] > 0)[3]!;
    await page.locator(`figure[data-chart="Traces"] rect.chart-hit[data-bucket="${busy['created_at']}"]`).click();
    await page.locator('table.records').waitFor();
    const url = new URL(page.url());
    assert.match(url.pathname, /\/traces$/);
    const start = busy['created_at'] as string;
    const end = new Date(Date.parse(start) + 300_000).toISOString();
    assert.deepEqual(JSON.parse(url.searchParams.get('f')!), {
      and: [
        { filter: { type: 'date', column_id: 'created_at', operator: 'gte', value: start } },
        { filter: { type: 'date', column_id: 'created_at', operator: 'lt', value: end } },
      ],
    });
    const noun = busy['count'] === 1 ? 'trace' : 'traces';
    await until(
      async () => (await text(page, '.count')) === `${busy['count']} ${noun}` || (await text(page, '.count')),
      'the bucket’s count',
    );
    assert.equal(await page.locator('table.records tbody tr').count(), busy['count']);
    assert.match(await text(page, '.filter-summary .expr'), /Created/);
    await shot(page, 'overview-bucket-table');
  });

  test('a bar of a metric’s distribution opens the traces within it', async () => {
    await page.goto(`${h.fx.url}${routeUrl(overview())}`);
    const dist = 'Distribution of helpfulness';
    await page.locator(`figure[data-chart="${dist}"] svg`).waitFor();
    // The bar lies over the bin's hover target: the click lands on the bar.
    await page.locator(`figure[data-chart="${dist}"] rect.chart-hit[data-bucket="0.7–0.8"]`).click({ force: true });
    await page.locator('table.records').waitFor();
    const leaves = JSON.stringify(JSON.parse(new URL(page.url()).searchParams.get('f')!));
    assert.match(leaves, /"column_id":"metrics\/helpfulness","operator":"gte","value":0\.7/);
    assert.match(leaves, /"column_id":"metrics\/helpfulness","operator":"lt","value":0\.8/);
    const want = traces().filter((t) => (t['metrics'] as { helpfulness: number }).helpfulness === 0.75).length;
    await until(async () => (await text(page, '.count')) === `${want} traces` || (await text(page, '.count')), 'the bar’s count');
    assert.deepEqual(errors, []);
  });

  test('a model’s part of a stacked bar opens its llm spans; the time range lives in the URL', async () => {
    await page.goto(`${h.fx.url}${routeUrl(overview())}`);
    const bar = page.locator('figure[data-chart="Cost by model"] rect.chart-bar[data-series="gpt-4o-mini"]').first();
    await bar.click();
    await page.locator('table.records').waitFor();
    const f = JSON.parse(new URL(page.url()).searchParams.get('f')!);
    assert.deepEqual(f.and.slice(2), [
      { filter: { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' } },
      { filter: { type: 'text', column_id: 'model', operator: 'eq', value: 'gpt-4o-mini' } },
    ]);
    assert.match(new URL(page.url()).pathname, /\/spans$/);

    await page.goto(`${h.fx.url}${routeUrl(overview())}`);
    await page.getByRole('button', { name: 'Last hour' }).click();
    await page.getByText('No traces in this time range.').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('range'), 'hour');
    await page.getByLabel('From (UTC)').fill('2026-11-10T09:00');
    await page.getByLabel('to', { exact: true }).fill('2026-11-10T10:00');
    await page.getByRole('button', { name: 'Apply' }).click();
    await until(
      async () => (await text(page, '[data-total="traces"]')) === String(3 + 9) || (await text(page, '.page')),
      'the 09:00 hour only',
    );
    const params = new URL(page.url()).searchParams;
    assert.deepEqual([params.get('from'), params.get('to')], ['2026-11-10T09:00:00Z', '2026-11-10T10:00:00Z']);
    await page.reload();
    await until(async () => (await text(page, '[data-total="traces"]')) === '12' || 'not yet', 'the range survives a reload');
    assert.deepEqual(errors, []);
  });

  test('two runs side by side: the API’s numbers per run, differences marked', async () => {
    await page.goto(`${h.fx.url}/ui/p/${h.fx.projectId}`);
    const compare = page.getByRole('button', { name: /^Compare/ });
    await page.getByLabel('Compare production').check();
    assert.equal(await compare.isDisabled(), true, 'one run is not a comparison');
    await page.getByLabel('Compare canary').check();
    await compare.click();
    await page.locator('table.compare').waitFor();
    assert.deepEqual(await page.locator('table.compare thead th').allInnerTexts(), ['Measure', 'production', 'canary']);
    const cell = (measure: string, col: number) => text(page, `tr[data-measure="${measure}"] td:nth-of-type(${col}) .value`);
    for (const [col, run] of [
      [1, h.fx.logStreamId],
      [2, canary],
    ] as const) {
      const t = await aggregate(
        'traces',
        { measures: [{ op: 'count' }, { op: 'p95', column_id: 'metrics/duration_ns', alias: 'p95' }] },
        run,
      );
      const s = await aggregate(
        'spans',
        {
          measures: [
            { op: 'sum', column_id: 'metrics/cost', alias: 'cost' },
            { op: 'avg', column_id: 'metrics/cost', alias: 'x' },
          ],
        },
        run,
      );
      await until(
        async () => (await cell('traces', col)) === String(t.rows[0]!['count']) || (await cell('traces', col)),
        `traces of ${col}`,
      );
      assert.equal(await cell('p95', col), formatDuration(t.rows[0]!['p95']));
      assert.equal(await cell('cost', col), `$${formatNumber(s.rows[0]!['cost'])}`);
    }
    // The canary's latencies are twice as long: a growth marked as worse.
    assert.equal(await page.locator('tr[data-measure="p95"] .diff').getAttribute('class'), 'diff worse');
    assert.match(await text(page, 'tr[data-measure="p95"] .diff'), /^▲/);
    assert.equal(await page.locator('figure[data-chart="Latency p95"] rect').count(), 2, 'a bar per run');
    await page.locator('tr[data-measure="metric:helpfulness"]').waitFor();
    await shot(page, 'compare');
    await page.screenshot({ path: join(ARTIFACTS, 'compare-full.png'), fullPage: true });
    assert.deepEqual(errors, []);
  });
});
