// Guarantees a user in a real browser can sign in, list projects, read a run's traces (sorted,
// filtered, paged, all in the URL), walk a trace's span tree by mouse and keyboard, read a span's
// detail, read a session, switch themes and sign out, with trace content only ever shown as text.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { routeUrl, runTable, type Route } from '../../../src/ui/lib/routes.js';
import { browserSkip, newPage, shot } from '../../support/browser.js';
import { seedViewerData, XSS, type ViewerData } from '../../support/viewer-data.js';
import { expectRows, harness, rowIds, text, treeState, until, type Harness } from './support.js';

// Globals of the page, used by the functions page.evaluate runs there (tests compile without the DOM lib).
declare const window: any, document: any, navigator: any, getComputedStyle: any;

const skip = browserSkip();

describe('the viewer in Chromium', { skip }, () => {
  let h: Harness;
  let data: ViewerData;
  let context: BrowserContext;
  let page: Page;
  let errors: string[];
  const dialogs: string[] = [];
  const api = async (path: string, body: unknown) => {
    const r = await h.fx.call('POST', `/v2/projects/${data.projectId}${path}`, body);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body;
  };
  const ids = (page: { records: { id: string }[] }) => page.records.map((r) => r.id);
  const go = (route: Route | string) => page.goto(`${h.fx.url}${typeof route === 'string' ? route : routeUrl(route)}`);
  const table = (extra: Partial<Extract<Route, { name: 'table' }>['query']> = {}, level: 'traces' | 'spans' | 'sessions' = 'traces') => {
    const r = runTable(data.projectId, 'ls', data.logStreamId, level) as Extract<Route, { name: 'table' }>;
    return { ...r, query: { ...r.query, ...extra } };
  };

  before(async () => {
    h = await harness();
    data = await seedViewerData(h.fx);
    ({ context, page, errors } = await newPage(h.browser));
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.fx.url });
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });
  after(async () => h?.close());

  test('GET / leads to the sign-in form; a wrong key is refused; the API key signs in', async () => {
    await go('/');
    assert.match(page.url(), /\/ui\/$/);
    await page.getByLabel('API key').fill('tl_not_the_key');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'not accepted' }).waitFor();
    await shot(page, '01-sign-in');
    await page.getByLabel('API key').fill(h.fx.key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
  });

  test('the projects list shows the user’s projects with their log streams', async () => {
    await page.locator('table.projects tbody tr').nth(1).waitFor();
    const rows = await page.locator('table.projects tbody tr').allInnerTexts();
    assert.equal(rows.length, 2);
    assert.match(rows[0]!, /batch-jobs\s+nightly\s+0/);
    assert.match(rows[1]!, /support-bot\s+production\s+1/);
    await shot(page, '02-projects');
  });

  test('a log stream opens its traces table: the total count and the newest 50 traces', async () => {
    await page.getByRole('link', { name: 'production' }).click();
    const total = (await api('/traces/count', { log_stream_id: data.logStreamId })).total_count;
    const first = await api('/traces/partial_search', {
      log_stream_id: data.logStreamId,
      limit: 50,
      select_columns: { column_ids: ['name'] },
    });
    await until(async () => (await text(page, '.count')) === `${total} traces` || (await text(page, '.count')), 'count shown');
    await expectRows(page, ids(first), 'first page');
    assert.equal(await text(page, '.pager .range'), `1–50 of ${total}`);
    const headers = await page.locator('table.records thead th').allInnerTexts();
    assert.deepEqual(
      headers.map((s) => s.replace(/[▲▼]/g, '').trim()),
      ['Name', 'Input', 'Output', 'Created', 'Duration', 'Tokens', 'Status', 'Tags'],
    );
    assert.match(await page.locator('th[aria-sort=descending]').innerText(), /^Created/);
    await shot(page, '03-traces');
  });

  test('clicking a header sorts on the server, metrics included; clicking again reverses', async () => {
    const sorted = async (column: string, ascending: boolean) =>
      ids(
        await api('/traces/partial_search', {
          log_stream_id: data.logStreamId,
          limit: 50,
          sort: { column_id: column, ascending },
          select_columns: { column_ids: ['name'] },
        }),
      );
    await page.getByRole('button', { name: 'Duration' }).click();
    await expectRows(page, await sorted('metrics/duration_ns', false), 'sorted by duration, longest first');
    assert.match(page.url(), /sort=metrics%2Fduration_ns%3Adesc/);
    assert.match(await page.locator('th[aria-sort=descending]').innerText(), /Duration/);
    await page.getByRole('button', { name: 'Duration' }).click();
    await expectRows(page, await sorted('metrics/duration_ns', true), 'sorted by duration, shortest first');
    assert.match(await page.locator('th[aria-sort=ascending]').innerText(), /Duration/);
    await page.getByRole('button', { name: 'Tokens' }).click();
    await expectRows(page, await sorted('metrics/num_total_tokens', false), 'sorted by total tokens (a roll-up on traces)');
    await page.getByRole('button', { name: 'Name' }).click();
    await expectRows(page, await sorted('name', true), 'sorted by name');
  });

  test('a filter built from available_columns changes the count; its negation counts the rest', async () => {
    await go(table());
    const total = (await api('/traces/count', { log_stream_id: data.logStreamId })).total_count;
    await until(async () => (await text(page, '.count')) === `${total} traces`, 'unfiltered count');
    await page.getByRole('button', { name: 'Filter' }).click();
    const builder = page.getByRole('form', { name: 'Filter builder' });
    assert.equal(await builder.getByLabel('Column').inputValue(), 'name');
    const operators = await builder.getByLabel('Operator').locator('option').allInnerTexts();
    assert.deepEqual(operators, ['contains', 'is', 'is not', 'is one of', 'is none of']);
    await builder.getByLabel('Value').fill('chat');
    await shot(page, '04-filter-builder');
    await builder.getByRole('button', { name: 'Apply filter' }).click();
    // Text conditions start case-insensitive (the "Aa" box unticked).
    const tree = { and: [{ filter: { type: 'text', column_id: 'name', operator: 'contains', value: 'chat', case_sensitive: false } }] };
    const matching = (await api('/traces/count', { log_stream_id: data.logStreamId, filter_tree: tree })).total_count;
    assert.ok(matching > 0 && matching < total, `${matching} of ${total}`);
    await until(async () => (await text(page, '.count')) === `${matching} traces` || (await text(page, '.count')), 'filtered count');
    assert.deepEqual(JSON.parse(new URL(page.url()).searchParams.get('f')!), tree);
    assert.equal(await text(page, '.filter-summary .expr'), 'Name contains "chat"');
    // The same condition under "not": the complement.
    await page.getByRole('button', { name: 'Filter (1)' }).click();
    await builder.getByRole('checkbox', { name: 'not' }).first().check();
    await builder.getByRole('button', { name: 'Apply filter' }).click();
    await until(async () => (await text(page, '.count')) === `${total - matching} traces` || (await text(page, '.count')), 'negated count');
    // A metric condition in a nested "any" group, durations entered in ms.
    await page.getByRole('button', { name: 'Filter (1)' }).click();
    await builder.getByRole('checkbox', { name: 'not' }).first().uncheck();
    await builder.getByRole('button', { name: '+ Group' }).first().click();
    const group = builder.getByRole('group', { name: 'Condition group' });
    await group.getByLabel('Column').selectOption('metrics/duration_ns');
    await group.getByLabel('Operator').selectOption('gt');
    await group.getByLabel('Value').fill('5000');
    await group.getByRole('button', { name: '+ Condition' }).click();
    await group.getByLabel('Column').nth(1).selectOption('tags');
    await group.getByLabel('Value').nth(1).fill('canary');
    await builder.getByRole('button', { name: 'Apply filter' }).click();
    const nested = {
      and: [
        tree.and[0],
        {
          or: [
            { filter: { type: 'number', column_id: 'metrics/duration_ns', operator: 'gt', value: 5e9 } },
            { filter: { type: 'collection', column_id: 'tags', operator: 'contains', value: 'canary' } },
          ],
        },
      ],
    };
    const both = (await api('/traces/count', { log_stream_id: data.logStreamId, filter_tree: nested })).total_count;
    await until(async () => (await text(page, '.count')) === `${both} traces` || (await text(page, '.count')), 'nested filter count');
    assert.deepEqual(JSON.parse(new URL(page.url()).searchParams.get('f')!), nested);
  });

  test('paging moves through the server’s pages and says where it is', async () => {
    await go(table());
    const total = (await api('/traces/count', { log_stream_id: data.logStreamId })).total_count;
    const second = await api('/traces/partial_search', {
      log_stream_id: data.logStreamId,
      starting_token: 50,
      limit: 50,
      select_columns: { column_ids: ['name'] },
    });
    await page.locator('table.records tbody tr').first().waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await expectRows(page, ids(second), 'second page');
    assert.equal(await text(page, '.pager .range'), `51–100 of ${total}`);
    assert.match(page.url(), /page=2/);
    await page.getByLabel('Rows per page').selectOption('25');
    await until(async () => (await rowIds(page)).length === 25, '25 rows');
    assert.equal(await text(page, '.pager .range'), `1–25 of ${total}`);
    await page.getByRole('button', { name: 'Previous page' }).isDisabled();
  });

  test('a table URL holds its whole state: it survives a reload, and Back returns to it', async () => {
    const filter = { and: [{ filter: { type: 'text', column_id: 'input', operator: 'contains', value: 'e', case_sensitive: false } }] };
    const route = table({
      sort: { column: 'metrics/num_total_tokens', ascending: true },
      cols: ['name', 'metrics/num_total_tokens', 'metrics/correctness', 'tags'],
      filter,
      page: 2,
      size: 25,
    });
    const body = { log_stream_id: data.logStreamId, filter_tree: filter };
    const count = (await api('/traces/count', body)).total_count;
    const expected = ids(
      await api('/traces/partial_search', {
        ...body,
        sort: { column_id: 'metrics/num_total_tokens', ascending: true },
        starting_token: 25,
        limit: 25,
        select_columns: { column_ids: ['name'] },
      }),
    );
    assert.ok(count > 25, `the filter leaves ${count} traces`);
    await go(route);
    const check = async () => {
      await expectRows(page, expected, 'the page named by the URL');
      const headers = (await page.locator('table.records thead th').allInnerTexts()).map((s) => s.replace(/[▲▼]/g, '').trim());
      assert.deepEqual(headers, ['Name', 'Tokens', 'Correctness', 'Tags']);
      assert.match(await page.locator('th[aria-sort=ascending]').innerText(), /Tokens/);
      assert.equal(await text(page, '.pager .range'), `26–${Math.min(50, count)} of ${count}`);
      assert.equal(await text(page, '.filter-summary .expr'), 'Input contains "e"');
    };
    await check();
    await page.reload();
    await check();
    await page.locator('table.records tbody tr').first().click();
    await page.getByRole('tree').waitFor();
    await page.goBack();
    await check();
  });

  test('a trace shows its span tree with a timeline; a span shows its conversation, metrics and raw record', async () => {
    await go(table());
    await page.getByRole('link', { name: 'refund request' }).click();
    await page.getByRole('tree', { name: 'Spans' }).waitFor();
    const items = page.getByRole('treeitem');
    await until(async () => (await items.count()) === 7, 'trace and its six spans');
    assert.deepEqual(
      await items.evaluateAll((els) => els.map((e) => `${e.getAttribute('aria-level')}:${e.querySelector('.span-name')?.textContent}`)),
      ['1:refund request', '2:planner', '3:chat', '3:lookup', '4:search', '4:calc', '3:guard'],
    );
    assert.equal(await page.locator('.bar').count(), 7);
    const spans = await api('/spans/search', { filters: [{ type: 'id', column_id: 'trace_id', value: data.everyKindTraceId }], limit: 10 });
    const chat = spans.records.find((r: any) => r.name === 'chat');
    await items.filter({ hasText: 'chat' }).click();
    await page.getByRole('heading', { name: 'chat', level: 2 }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('span'), chat.id);
    const messages = page.locator('.conversation article');
    await until(async () => (await messages.count()) === 3, 'three messages');
    assert.deepEqual(
      await messages.evaluateAll((els) => els.map((e) => `${e.getAttribute('aria-label')}|${e.querySelector('pre')?.textContent}`)),
      ['system message|be brief', 'user message|say refund', 'assistant message|refund!'],
    );
    await shot(page, '05-trace-llm');
    await page.getByRole('button', { name: 'Copy span id' }).click();
    await until(async () => (await page.evaluate(() => navigator.clipboard.readText())) === chat.id, 'span id copied');
    await page.getByRole('tab', { name: 'Metrics' }).click();
    const metrics = await page.locator('table.metrics tbody tr').allInnerTexts();
    assert.ok(
      metrics.some((m) => /num_input_tokens\s+12\s+logged/.test(m)),
      metrics.join(' / '),
    );
    await page.getByRole('tab', { name: 'Raw JSON' }).click();
    const raw = JSON.parse((await page.locator('.tab-panel pre').textContent())!);
    assert.equal(raw.id, chat.id);
    assert.equal(raw.model, 'gpt-4o');
    assert.equal(new URL(page.url()).searchParams.get('tab'), 'raw');
    // The retriever's documents and a trace-level roll-up.
    await items.filter({ hasText: 'search' }).click();
    await page.getByRole('tab', { name: 'Content' }).click();
    await until(async () => (await page.locator('.documents li pre').allInnerTexts()).join('|') === 'doc one|doc two', 'documents');
  });

  test('the tree answers the keyboard as an ARIA tree, and the selection lives in the URL', async () => {
    await go({ name: 'trace', projectId: data.projectId, traceId: data.everyKindTraceId, spanId: null, tab: 'overview' });
    const tree = page.getByRole('tree', { name: 'Spans' });
    await tree.waitFor();
    await until(async () => (await treeState(page)).rows === 7, 'tree loaded');
    await tree.focus();
    const press = async (key: string, selected: string, extra?: (s: Awaited<ReturnType<typeof treeState>>) => boolean) => {
      await page.keyboard.press(key);
      await until(async () => {
        const s = await treeState(page);
        return (s.selected === selected && (!extra || extra(s))) || JSON.stringify(s);
      }, `${key} selects ${selected}`);
    };
    await press('Home', 'refund request');
    await press('ArrowDown', 'planner');
    await press('ArrowRight', 'chat'); // planner is open: into its first child
    await press('ArrowLeft', 'planner'); // chat is a leaf: back to its parent
    await press('ArrowLeft', 'planner', (s) => s.expanded === 'false' && s.rows === 2); // collapses
    await press('ArrowRight', 'planner', (s) => s.expanded === 'true' && s.rows === 7); // expands
    await press('End', 'guard');
    await press('ArrowUp', 'calc');
    await page.getByRole('heading', { name: 'calc', level: 2 }).waitFor();
    await until(
      async () => (await page.locator('.tab-panel pre').allInnerTexts()).join('|') === '{\n  "a": 1\n}|2',
      'tool input and output',
    );
    await shot(page, '06-trace-keyboard');
    const url = page.url();
    assert.ok(new URL(url).searchParams.get('span'));
    await page.reload();
    await page.getByRole('heading', { name: 'calc', level: 2 }).waitFor();
    assert.equal((await treeState(page)).selected, 'calc');
    assert.equal(page.url(), url);
  });

  test('markup in names, messages, documents and metadata shows as text and runs nothing', async () => {
    await go(table({ filter: { filter: { type: 'text', column_id: 'name', operator: 'contains', value: 'render <' } } }));
    await page.getByRole('link', { name: `render ${XSS.img}` }).waitFor();
    assert.equal(await page.locator('td.col-input').first().innerText(), XSS.script);
    await go({ name: 'trace', projectId: data.projectId, traceId: data.xssTraceId, spanId: null, tab: 'overview' });
    await page.getByRole('heading', { name: `render ${XSS.img}`, level: 1 }).waitFor();
    const inspect = () =>
      page.evaluate(() => ({
        imgs: document.querySelectorAll('img').length,
        svgs: document.querySelectorAll('svg').length,
        scripts: document.querySelectorAll('script').length,
        flag: (window as { __xss?: unknown }).__xss ?? null,
      }));
    await page.getByText(XSS.script, { exact: true }).waitFor();
    await page.getByRole('treeitem').filter({ hasText: 'chat with markup' }).click();
    await page.getByText(`Please show ${XSS.img} and ${XSS.script}`).waitFor();
    await page.getByText(`Here it is: ${XSS.img}`).waitFor();
    await shot(page, '07-markup-as-text');
    await page.getByRole('treeitem').filter({ hasText: 'docs' }).click();
    await page.locator('.documents pre').filter({ hasText: XSS.img }).waitFor();
    await page.getByRole('treeitem').first().click();
    await page.getByRole('tab', { name: 'Metadata' }).click();
    await page.locator('.kv-value').filter({ hasText: XSS.img }).first().waitFor();
    await page.waitForTimeout(200); // an image error handler would have fired by now
    assert.deepEqual(await inspect(), { imgs: 0, svgs: 0, scripts: 1, flag: null });
    assert.deepEqual(dialogs, []);
  });

  test('a session reads as a conversation of its traces, oldest first', async () => {
    await go(table({}, 'sessions'));
    const sessions = (await api('/sessions/count', { log_stream_id: data.logStreamId })).total_count;
    await until(async () => (await text(page, '.count')) === `${sessions} sessions`, 'sessions count');
    await go({ name: 'session', projectId: data.projectId, sessionId: data.sessionId });
    const turns = page.locator('.turn');
    await until(async () => (await turns.count()) === data.sessionTraceIds.length, 'one turn per trace');
    const hrefs = await page.locator('.turn-head a').evaluateAll((as) => as.map((a) => a.getAttribute('href')!.split('/').pop()));
    assert.deepEqual(hrefs, data.sessionTraceIds);
    await shot(page, '08-session');
    await page.locator('.turn-head a').first().click();
    await page.getByRole('tree').waitFor();
    assert.match(page.url(), new RegExp(`/traces/${data.sessionTraceIds[0]}$`));
    await page.locator('[role=treeitem]:has(.kind-llm)').first().click();
    await page.locator('.conversation article').first().waitFor();
    await shot(page, '12-generated-trace');
  });

  test('the spans table and an experiment’s table work the same way', async () => {
    await go(table({}, 'spans'));
    const spans = (await api('/spans/count', { log_stream_id: data.logStreamId })).total_count;
    await until(async () => (await text(page, '.count')) === `${spans.toLocaleString('en-US')} spans`, 'spans count');
    await page.getByRole('button', { name: 'Kind' }).click();
    const byKind = await api('/spans/partial_search', {
      log_stream_id: data.logStreamId,
      limit: 50,
      sort: { column_id: 'type', ascending: true },
      select_columns: { column_ids: ['name'] },
    });
    await expectRows(page, ids(byKind), 'spans sorted by kind');
    await shot(page, '09-spans');
    await go({ name: 'project', projectId: data.projectId });
    await page.getByRole('link', { name: 'prompt-v2' }).click();
    const traces = (await api('/traces/count', { experiment_id: data.experimentId })).total_count;
    await until(async () => (await text(page, '.count')) === `${traces} traces`, 'experiment traces count');
  });

  test('the dark theme applies and is remembered', async () => {
    await go({ name: 'trace', projectId: data.projectId, traceId: data.sessionTraceIds[0]!, spanId: null, tab: 'overview' });
    await page.locator('[role=treeitem]:has(.kind-llm)').first().click();
    await page.getByLabel('Theme').selectOption('dark');
    assert.equal(await page.evaluate(() => document.documentElement.dataset['theme']), 'dark');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(14, 18, 23)');
    await page.locator('.conversation article').first().waitFor();
    await shot(page, '10-trace-dark');
    await page.reload();
    await page.getByRole('tree').waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.dataset['theme']), 'dark');
    await page.getByLabel('Theme').selectOption('system');
    assert.equal(await page.evaluate(() => document.documentElement.dataset['theme']), 'light');
  });

  test('signing out returns to the form; signing in again (email and password) returns to the same screen', async () => {
    const user = h.fx.store.users.create({ email: 'ana@example.com', password: 'correct horse battery' });
    h.fx.store.catalog.addProjectMember(data.projectId, user.id, 'viewer');
    const route: Route = { name: 'session', projectId: data.projectId, sessionId: data.sessionId };
    await go(route);
    await page.locator('.turn').first().waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    await page.reload();
    await page.getByLabel('API key').waitFor();
    await page.getByText('Sign in with email and password').click();
    await page.getByLabel('Email').fill('ana@example.com');
    await page.getByLabel('Password').fill('correct horse battery');
    await page.getByRole('button', { name: 'Sign in with password' }).click();
    await page.locator('.turn').first().waitFor();
    assert.equal(page.url(), `${h.fx.url}${routeUrl(route)}`);
    assert.equal(await text(page, '.who'), 'ana@example.com');
    // This user sees only the project they were added to.
    await go('/ui/');
    await page.locator('table.projects tbody tr').first().waitFor();
    assert.deepEqual(
      (await page.locator('table.projects tbody td:first-child').allInnerTexts()).map((s) => s.trim()),
      ['support-bot'],
    );
  });

  test('no script error or Content-Security-Policy violation was reported', () => {
    assert.deepEqual(errors, []);
  });
});
