// Guarantees a user in a real browser sees what the store's scorers did and can drive them: each
// metric's status where metrics are shown (a value with the scorer's explanation and version, failed
// with its message, pending, not applicable, not computed; markers in table cells instead of blanks),
// a run's Scorers page that enables and disables scorers and sets a sample rate through the run's
// scorer settings (the other scorers kept as they were), and "Score these" on a filtered table that
// scores exactly the records the filter selects, follows the job and shows the new values.
// Online scoring is off here, so what is not scored on demand stays pending.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { routeUrl, type Route } from '../../../src/ui/lib/routes.js';
import { browserSkip, newPage, shot, signIn } from '../../support/browser.js';
import { harness, text, until, type Harness } from './support.js';

const skip = browserSkip();
type Rec = Record<string, any>;

/** A trace of two llm spans (answers `a` and `b`, reference `ref` when given) and a tool span. */
function trace(tag: string, a: string, b: string, ref: string | null): Rec {
  const llm = (name: string, output: string) => ({
    type: 'llm',
    name,
    input: [{ role: 'user', content: `question ${tag}` }],
    output: { role: 'assistant', content: output },
    ...(ref !== null ? { dataset_output: ref } : {}),
  });
  return {
    type: 'trace',
    name: `trace-${tag}`,
    input: `question ${tag}`,
    output: b,
    spans: [llm(`first-${tag}`, a), llm(`second-${tag}`, b), { type: 'tool', name: `tool-${tag}`, input: '1', output: '2' }],
  };
}

const outputText = (r: { output?: unknown }) => String((r.output as Rec | undefined)?.['content'] ?? r.output ?? '');

describe('scorers in the viewer, in Chromium', { skip }, () => {
  let h: Harness;
  let page: Page;
  let errors: string[];
  let pid: string;
  let run: string;
  const spans = async (body: Rec = {}): Promise<Rec[]> => {
    const r = await h.fx.call('POST', `/v2/projects/${pid}/spans/search`, { log_stream_id: run, limit: 100, ...body });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.records;
  };
  const settings = async (): Promise<Rec[]> => {
    const r = await h.fx.call('GET', `/v2/projects/${pid}/runs/${run}/scorer-settings`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.scorers;
  };
  const spansTable = (filter: unknown, cols: string[]): Route => ({
    name: 'table',
    projectId: pid,
    runKind: 'ls',
    runId: run,
    level: 'spans',
    query: { sort: { column: 'name', ascending: true }, cols, filter, page: 1, size: 50 },
  });

  before(async () => {
    h = await harness({ scoring: { online: false } });
    pid = h.fx.projectId;
    run = h.fx.logStreamId;
    h.fx.store.catalog.renameRun(pid, run, 'production');
    const store = h.fx.store;
    store.scorers.define({
      name: 'short_answer',
      scoreableNodeTypes: ['llm'],
      score: (r) => {
        const n = outputText(r).split(/\s+/).length;
        return { value: n <= 3, explanation: `${n} words` };
      },
    });
    store.scorers.define({
      name: 'brittle',
      scoreableNodeTypes: ['llm'],
      score: (r) => {
        if (outputText(r).includes('boom')) throw new Error('cannot score an answer that says boom');
        return 1;
      },
    });
    const reg = await h.fx.call('POST', '/v2/scorers', {
      name: 'mentions_paris',
      scorer_type: 'code',
      version: { rule: { kind: 'regex', field: 'output', pattern: 'Paris' } },
    });
    assert.equal(reg.status, 200, JSON.stringify(reg.body));
    store.catalog.setRunScorerSettings(pid, run, {
      scorers: [{ name: 'bleu' }, { name: 'short_answer' }, { name: 'brittle' }, { name: 'rouge' }, { name: 'correctness' }],
    });
    const logged = await h.fx.call('POST', `/v2/projects/${pid}/traces`, {
      log_stream_id: run,
      traces: [
        trace('a', 'The cat sat on the mat.', 'Paris', 'The cat sat on the mat.'),
        trace('b', 'It is sunny in Paris today', 'boom', 'It is sunny in Paris.'),
        trace('c', 'anything at all', 'else', null),
      ],
    });
    assert.equal(logged.status, 200, JSON.stringify(logged.body));
    // Scored on demand: bleu, short_answer and brittle; rouge stays pending, correctness cannot run here.
    const job = store.scorers.score({ projectId: pid, runId: run, scorers: ['bleu', 'short_answer', 'brittle'] });
    assert.equal((await store.scorers.wait(job.id)).status, 'completed');
    ({ page, errors } = await newPage(h.browser));
    await signIn(page, h.fx.url, h.fx.key);
  });
  after(async () => h?.close());

  test("a span's metrics show each status with the scorer's explanation, version or message; cells mark what has no value", async () => {
    const api = await spans();
    const first = api.find((s) => s.name === 'first-c')!;
    assert.equal(first.metric_info.bleu.status_type, 'not_applicable');
    assert.equal(first.metric_info.rouge.status_type, 'pending');
    const broken = api.find((s) => s.name === 'second-b')!;
    assert.equal(broken.metric_info.brittle.status_type, 'failed');

    // The table: metric columns of enabled scorers, a marker where a record has no value.
    const columns = ['type', 'name', 'metrics/bleu', 'metrics/short_answer', 'metrics/brittle', 'metrics/rouge', 'metrics/correctness'];
    await page.goto(`${h.fx.url}${routeUrl(spansTable(null, columns))}`);
    const cell = (span: string, metric: string) =>
      page.getByRole('row', { name: new RegExp(`\\b${span}\\b`) }).locator(`td.col-metrics-${metric}`);
    await cell('second-b', 'brittle').locator('.mstatus-failed').waitFor();
    assert.equal(await cell('second-b', 'brittle').textContent(), 'failed');
    assert.match(
      (await cell('second-b', 'brittle').locator('.mstatus').getAttribute('title')) ?? '',
      /failed on this record: .*cannot score an answer that says boom/,
    );
    assert.equal(await cell('first-a', 'rouge').textContent(), 'pending');
    assert.equal(await cell('first-c', 'bleu').textContent(), 'n/a');
    assert.equal(await cell('first-a', 'correctness').textContent(), 'not computed');
    assert.equal(await cell('first-a', 'bleu').textContent(), '1');
    assert.match((await cell('first-a', 'short_answer').locator('span').getAttribute('title')) ?? '', /Computed by a scorer.*6 words/);
    assert.equal(await cell('tool-a', 'rouge').textContent(), '–', 'a tool span is not one rouge scores');
    await shot(page, 'scorers-table');

    // The span's Metrics tab: every status with its words, a failure's message open, an explanation to expand.
    await page.goto(
      `${h.fx.url}${routeUrl({ name: 'trace', projectId: pid, traceId: broken.trace_id, spanId: broken.id, tab: 'metrics' })}`,
    );
    const row = (metric: string) => page.locator(`table.metrics tr[data-metric="${metric}"]`);
    // The trace's own record shows first, then the span the URL names.
    const shows = (name: string) => until(async () => (await text(page, '.detail-head h2')) === name, `the detail shows ${name}`);
    await shows('second-b');
    await row('brittle').waitFor();
    assert.equal(await row('brittle').getAttribute('data-status'), 'failed');
    assert.equal(
      await text(page, 'table.metrics tr[data-metric="brittle"] .note-text'),
      'the scorer threw: cannot score an answer that says boom',
    );
    assert.ok(await row('brittle').locator('.note-text').isVisible(), "a failure's message shows without a click");
    assert.equal(await row('rouge').getAttribute('data-status'), 'pending');
    assert.equal(await text(page, 'table.metrics tr[data-metric="rouge"] td.num'), 'pending');
    assert.equal(await row('correctness').getAttribute('data-status'), 'not_computed');
    assert.match((await row('correctness').textContent()) ?? '', /cannot run on this server.*no judge is configured/);
    assert.match((await row('short_answer').textContent()) ?? '', /scorer, v1/);
    assert.ok(!(await row('short_answer').locator('.note-text').isVisible()), 'an explanation waits to be expanded');
    await row('short_answer').getByText('Explanation').click();
    assert.equal(await text(page, 'table.metrics tr[data-metric="short_answer"] .note-text'), '1 words');
    await shot(page, 'scorers-span');
    const scored = api.find((s) => s.name === 'first-a')!;
    await page.goto(
      `${h.fx.url}${routeUrl({ name: 'trace', projectId: pid, traceId: scored.trace_id, spanId: scored.id, tab: 'metrics' })}`,
    );
    await shows('first-a');
    await row('bleu').waitFor();
    assert.equal(await text(page, 'table.metrics tr[data-metric="bleu"] td.num'), '1');
    assert.equal(await row('bleu').getAttribute('data-status'), 'success');
    // The trace itself: its metrics roll up from the spans.
    await page.getByRole('treeitem').first().click();
    await until(async () => (await row('bleu').getAttribute('data-status')) === 'roll_up', "the trace's bleu is its spans' roll-up");
    assert.match((await row('bleu').textContent()) ?? '', /roll-up \(average of its spans\)/);
    assert.deepEqual(errors, []);
  });

  test("the Scorers page enables and disables a scorer and sets a sample rate through the run's scorer settings", async () => {
    const before = await settings();
    await page.goto(`${h.fx.url}/ui/p/${pid}`);
    const scorersUrl = routeUrl({ name: 'scorers', projectId: pid, runKind: 'ls', runId: run });
    const chip = page.getByRole('row', { name: /production/ }).getByRole('link', { name: 'scorers' });
    assert.equal(await chip.getAttribute('href'), scorersUrl, "the run's row links to its scorers");
    await page.getByRole('link', { name: 'production' }).click();
    await page.getByRole('link', { name: 'Scorers' }).click();
    assert.equal(new URL(page.url()).pathname, scorersUrl, "the table's Scorers tab");
    const enable = (label: string) => page.getByRole('checkbox', { name: `Enable ${label}`, exact: true });
    await enable('BLEU').waitFor();
    for (const label of ['BLEU', 'ROUGE', 'short_answer', 'brittle', 'Correctness']) assert.ok(await enable(label).isChecked(), label);
    assert.ok(!(await enable('mentions_paris').isChecked()));
    const paris = page.locator('tr[data-scorer="mentions_paris"]');
    assert.match((await paris.textContent()) ?? '', /code \(registered\).*llm/);
    assert.match((await page.locator('tr[data-scorer="input_toxicity"]').textContent()) ?? '', /LLM judge \(preset\).*trace/);

    await enable('mentions_paris').check();
    await until(async () => (await text(page, '.count')).startsWith('Saved: mentions_paris enabled'), 'saved');
    const now = await settings();
    assert.deepEqual(
      now.map((s) => s.name),
      [...before.map((s) => s.name), 'mentions_paris'],
      'enabled after the others, which stay',
    );
    assert.deepEqual(now.slice(0, before.length), before, 'the other scorers keep their settings');
    // A record logged now is owed the new metric (online scoring is off here, so it stays pending).
    const r = await h.fx.call('POST', `/v2/projects/${pid}/traces`, { log_stream_id: run, traces: [trace('d', 'Paris', 'x', null)] });
    assert.equal(r.status, 200);
    const fresh = (await spans({ filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'first-d' }] }))[0]!;
    assert.equal(fresh.metric_info.mentions_paris.status_type, 'pending');

    await page.getByRole('spinbutton', { name: 'Sample rate of BLEU (%)' }).fill('25');
    await page.getByRole('spinbutton', { name: 'Sample rate of BLEU (%)' }).press('Enter');
    await until(async () => (await text(page, '.count')).startsWith('Saved: BLEU samples 25%'), 'sample rate saved');
    assert.equal((await settings()).find((s) => s.name === 'bleu')!.sample_rate, 0.25);
    await shot(page, 'scorers-page-all');
    await page.getByRole('searchbox', { name: 'Find a scorer' }).fill('paris');
    assert.equal(await page.locator('table.scorers tbody tr').count(), 1, 'the search narrows the list');
    await shot(page, 'scorers-page');
    await enable('mentions_paris').uncheck();
    await until(async () => (await text(page, '.count')).startsWith('Saved: mentions_paris disabled'), 'saved');
    const last = await settings();
    assert.ok(!last.some((s) => s.name === 'mentions_paris'));
    assert.equal(last.find((s) => s.name === 'bleu')!.sample_rate, 0.25, 'the sample rate stays');
    // Back to every record, for the next test.
    await page.getByRole('searchbox', { name: 'Find a scorer' }).fill('');
    await page.getByRole('spinbutton', { name: 'Sample rate of BLEU (%)' }).fill('100');
    await page.getByRole('spinbutton', { name: 'Sample rate of BLEU (%)' }).press('Enter');
    await until(async () => (await settings()).find((s) => s.name === 'bleu')!.sample_rate === undefined, '100% is the default');
    assert.deepEqual(errors, []);
  });

  test('"Score these" scores exactly the records the table\'s filter selects, shows the job and the new values', async () => {
    const filter = { filter: { type: 'text', column_id: 'name', operator: 'contains', value: 'first' } };
    const counted = await h.fx.call('POST', `/v2/projects/${pid}/spans/count`, { log_stream_id: run, filter_tree: filter });
    assert.equal(counted.body.total_count, 4, 'first-a..d');
    await page.goto(`${h.fx.url}${routeUrl(spansTable(filter, ['type', 'name', 'output']))}`);
    await until(async () => (await text(page, '.count')) === '4 spans', 'the table counts the filter');
    await page.getByRole('button', { name: 'Score these' }).click();
    const panel = page.getByRole('region', { name: 'Score these' });
    await panel.getByRole('checkbox', { name: /ROUGE/ }).waitFor();
    for (const name of [/BLEU/, /short_answer/, /brittle/, /Correctness/]) await panel.getByRole('checkbox', { name }).uncheck();
    assert.ok(await panel.getByRole('checkbox', { name: /ROUGE/ }).isChecked(), 'enabled scorers start ticked');
    await panel.getByRole('button', { name: 'Score with 1 scorer' }).click();
    await until(
      async () => (await panel.locator('.job').getAttribute('data-job-status')) === 'completed' || 'running',
      'the job completes',
    );
    assert.match(await text(page, '.job-text'), /^Done: 4 records$/);
    assert.match(await text(page, '.job-counts'), /^2 scored · 2 not applicable$/);

    const all = await spans();
    for (const s of all.filter((x) => x.type === 'llm')) {
      const want = s.name.startsWith('first') ? (s.name === 'first-c' || s.name === 'first-d' ? 'not_applicable' : 'success') : 'pending';
      assert.equal(s.metric_info.rouge.status_type, want, `${s.name}: only what the filter selects is scored`);
    }
    // The table reloads with the new metric's column and values.
    const rouge = page.locator('table.records td.col-metrics-rouge');
    await until(async () => (await rouge.count()) === 4 || `${await rouge.count()} rouge cells`, 'the rouge column appears');
    const firstA = all.find((s) => s.name === 'first-a')!;
    const cellA = page.getByRole('row', { name: /first-a/ }).locator('td.col-metrics-rouge');
    // The new column may first show over the previous page (dimmed) until the reloaded page arrives.
    assert.equal(firstA.metrics.rouge, 1, 'the same text as its reference');
    await until(async () => (await cellA.textContent()) === '1' || `${await cellA.textContent()}`, 'first-a shows its rouge');
    assert.equal(
      await page
        .getByRole('row', { name: /first-c/ })
        .locator('td.col-metrics-rouge')
        .textContent(),
      'n/a',
    );
    await shot(page, 'scorers-score-these');
    // Every scorer's column over the whole run, with the panel open: the picture for the docs.
    const cols = ['type', 'name', 'output', ...['bleu', 'short_answer', 'brittle', 'rouge', 'correctness'].map((m) => `metrics/${m}`)];
    await page.goto(`${h.fx.url}${routeUrl(spansTable(null, cols))}`);
    await page
      .getByRole('row', { name: /second-b/ })
      .locator('td.col-metrics-rouge .mstatus-pending')
      .waitFor();
    await page.getByRole('button', { name: 'Score these' }).click();
    await panel.getByRole('checkbox', { name: /ROUGE/ }).waitFor();
    await shot(page, 'scorers-docs');
    assert.deepEqual(errors, []);
  });

  test('"Score these" on the traces table scores their spans; the traces show the roll-up', async () => {
    const route: Route = {
      name: 'table',
      projectId: pid,
      runKind: 'ls',
      runId: run,
      level: 'traces',
      query: { sort: { column: 'name', ascending: true }, cols: ['name', 'output'], filter: null, page: 1, size: 50 },
    };
    await page.goto(`${h.fx.url}${routeUrl(route)}`);
    await until(async () => (await text(page, '.count')) === '4 traces', 'four traces');
    await page.getByRole('button', { name: 'Score these' }).click();
    const panel = page.getByRole('region', { name: 'Score these' });
    await panel.getByRole('checkbox', { name: /ROUGE/ }).waitFor();
    assert.match(await text(page, '.score-panel p'), /a scorer of spans reads the filter as a filter of spans/);
    for (const name of [/BLEU/, /brittle/, /Correctness/, /ROUGE/]) await panel.getByRole('checkbox', { name }).uncheck();
    await panel.getByRole('button', { name: 'Score with 1 scorer' }).click();
    await until(
      async () => (await panel.locator('.job').getAttribute('data-job-status')) === 'completed' || 'running',
      'the job completes',
    );
    assert.match(await text(page, '.job-text'), /^Done: 8 records$/, 'every llm span of the run');
    const llm = (await spans()).filter((s) => s.type === 'llm');
    assert.ok(llm.every((s) => s.metric_info.short_answer.status_type === 'success'));
    const traces = await h.fx.call('POST', `/v2/projects/${pid}/traces/search`, { log_stream_id: run, limit: 10 });
    const d = traces.body.records.find((t: Rec) => t.name === 'trace-d');
    assert.equal(d.metric_info.short_answer.status_type, 'roll_up');
    const cell = page.getByRole('row', { name: /trace-d/ }).locator('td.col-metrics-short_answer span');
    await until(
      async () => (await cell.getAttribute('class')) === 'num rollup' || `${await cell.getAttribute('class')}`,
      'the roll-up shows',
    );
    assert.equal(await cell.textContent(), String(d.metric_info.short_answer.value));
    assert.equal(await cell.getAttribute('title'), 'average over its spans');
    assert.deepEqual(errors, []);
  });
});
