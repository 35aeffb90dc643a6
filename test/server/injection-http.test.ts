// Guarantees: SQL injection attempts in every string and key position of the record bodies (search,
// partial search, count, delete, available columns, at every level; filter values, column ids,
// `metrics/<name>` columns, sort columns, select_columns, filter-tree keys, run ids, paging; metric
// names, metadata keys, tags and names at ingest) never answer 5xx, never leak another project's
// records or a database message, never delete anything they should not, never create files, and leave
// the database intact (every project's records exactly as before, after a seal and after reopening).
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { assertConsistent, counts, scan } from '../support/consistency.js';
import { SQL_PAYLOADS } from '../support/fuzz/values.js';
import { startServer, type ServerFixture } from '../support/helpers.js';

const SECRET = 'VICTIM-SECRET-7f3a';
const LEAKS =
  /Binder Error|Parser Error|Catalog Error|Conversion Error|Invalid Input Error|INTERNAL Error|duckdb|\bat [\w.<>]+ \(|mem\.|read_parquet|SELECT /i;
/** Stored in the attacker's project too (as names, keys, tags, metric names). */
const PAYLOADS = [...SQL_PAYLOADS, "x' OR run_id <> '", "' OR project_id <> '", ') UNION ALL SELECT * FROM mem --'];
/** Only ever sent in queries: an attempt to reach the victim's marker. */
const QUERY_ONLY = [`'${SECRET}'`, `%${SECRET}%`, SECRET];
const LEVELS = ['spans', 'traces', 'sessions'] as const;
const PWNED = ['tracelake-pwned.csv', 'tracelake-pwned.db'].map((f) => join('/tmp', f));

/** Every body position a string can take, for one payload (`safe`: cannot match records, for delete). */
function bodies(p: string, ls: string, safe: boolean): { where: string; body: Record<string, unknown> }[] {
  const f = (filter: Record<string, unknown>) => ({ log_stream_id: ls, filters: [filter] });
  const out: { where: string; body: Record<string, unknown> }[] = [
    { where: 'text eq value', body: f({ type: 'text', column_id: 'name', operator: 'eq', value: p }) },
    {
      where: 'text contains value (case-insensitive)',
      body: f({ type: 'text', column_id: 'input', operator: 'contains', value: p, case_sensitive: false }),
    },
    { where: 'text one_of value', body: f({ type: 'text', column_id: 'output', operator: 'one_of', value: [p, `${p}2`] }) },
    { where: 'collection contains value', body: f({ type: 'collection', column_id: 'tags', operator: 'contains', value: p }) },
    { where: 'collection one_of value', body: f({ type: 'collection', column_id: 'tags', operator: 'one_of', value: [p] }) },
    { where: 'id value', body: f({ type: 'id', column_id: 'id', operator: 'eq', value: p }) },
    { where: 'id contains value', body: f({ type: 'id', column_id: 'trace_id', operator: 'contains', value: p }) },
    { where: 'date value', body: f({ type: 'date', column_id: 'created_at', operator: 'gt', value: p }) },
    { where: 'metric column name', body: f({ type: 'number', column_id: `metrics/${p}`, operator: 'gt', value: 0 }) },
    { where: 'column id', body: f({ type: 'text', column_id: p, operator: 'eq', value: 'x' }) },
    { where: 'column name spelling', body: f({ type: 'text', name: p, operator: 'eq', value: 'x' }) },
    { where: 'filter type', body: f({ type: p, column_id: 'name', operator: 'eq', value: 'x' }) },
    { where: 'operator', body: f({ type: 'text', column_id: 'name', operator: p, value: 'x' }) },
    { where: 'fully_annotated user ids', body: f({ type: 'fully_annotated', user_ids: [p] }) },
    {
      where: 'filter tree leaf',
      body: {
        log_stream_id: ls,
        filter_tree: {
          and: [
            { filter: { type: 'text', column_id: 'name', operator: 'eq', value: p } },
            { not: { filter: { type: 'number', column_id: `metrics/${p}`, operator: 'eq', value: 1 } } },
          ],
        },
      },
    },
    {
      where: 'filter tree key',
      body: { log_stream_id: ls, filter_tree: { [p]: [{ filter: { type: 'text', column_id: 'name', operator: 'eq', value: 'x' } }] } },
    },
    { where: 'run id', body: { log_stream_id: p } },
    { where: 'experiment id', body: { experiment_id: p, filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'x' }] } },
    {
      where: 'body key',
      body: { log_stream_id: ls, [p]: p, filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'nothing', [p]: p }] },
    },
  ];
  if (!safe) {
    out.push(
      { where: 'text ne value', body: f({ type: 'text', column_id: 'name', operator: 'ne', value: p }) },
      { where: 'text not_in value', body: f({ type: 'text', column_id: 'name', operator: 'not_in', value: [p] }) },
      {
        where: 'not over a metric',
        body: {
          log_stream_id: ls,
          filter_tree: { not: { filter: { type: 'number', column_id: `metrics/${p}`, operator: 'gte', value: 0 } } },
        },
      },
    );
  }
  return out;
}

function searchBodies(p: string, ls: string): { where: string; body: Record<string, unknown> }[] {
  return [
    { where: 'sort column', body: { log_stream_id: ls, sort: { column_id: p, ascending: true } } },
    { where: 'sort metric column', body: { log_stream_id: ls, sort: { column_id: `metrics/${p}`, ascending: false } } },
    { where: 'sort name spelling', body: { log_stream_id: ls, sort: { name: `metrics/${p}` } } },
    { where: 'sort type', body: { log_stream_id: ls, sort: { column_id: 'name', sort_type: p } } },
    { where: 'select column ids', body: { log_stream_id: ls, select_columns: { column_ids: [p, `metrics/${p}`, 'name'] } } },
    {
      where: 'metric column names',
      body: { log_stream_id: ls, select_columns: { includes_metric_columns: true, metric_columns_names: [p] } },
    },
    { where: 'previous_last_row_id', body: { log_stream_id: ls, previous_last_row_id: p } },
    { where: 'starting token as text', body: { log_stream_id: ls, starting_token: p } },
    { where: 'limit as text', body: { log_stream_id: ls, limit: p } },
  ];
}

interface Seen {
  requests: number;
  statuses: Map<number, number>;
}

let current = '';
/** Ids of the victim's records: none may ever appear in an answer to the attacker. */
const victimIds = new Set<string>();

async function attack(
  s: ServerFixture,
  seen: Seen,
  method: string,
  path: string,
  body: unknown,
  what: string,
): Promise<{ status: number; body: any }> {
  const r = await s.call(method, path, body);
  seen.requests++;
  seen.statuses.set(r.status, (seen.statuses.get(r.status) ?? 0) + 1);
  const text = JSON.stringify(r.body);
  assert.ok(r.status < 500, `${what}: answered ${r.status} ${text.slice(0, 300)}`);
  const own = current ? text.split(JSON.stringify(current).slice(1, -1)).join('') : text;
  assert.ok(!own.includes(SECRET), `${what}: the victim's records leaked: ${text.slice(0, 300)}`);
  for (const m of text.matchAll(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g))
    assert.ok(!victimIds.has(m[0]), `${what}: a victim record id leaked`);
  // Error messages may quote the payload itself; anything else that looks like SQL or a database error leaked.
  const leak = r.status >= 400 ? LEAKS.exec(current ? text.split(JSON.stringify(current).slice(1, -1)).join('') : text) : null;
  assert.equal(leak, null, `${what}: internal detail leaked (${leak?.[0]}): ${text.slice(0, 300)}`);
  if (r.status >= 400) assert.ok(r.body && typeof r.body === 'object' && 'detail' in r.body, `${what}: ${r.status} without detail`);
  return r;
}

test('SQL injection in every string and key position of the record bodies', { timeout: 300_000 }, async (t) => {
  const s = await startServer(t, { store: { sealRows: 1_000_000 } });
  const ls = s.logStreamId;
  // The victim: another project whose records hold a secret marker.
  const victim = s.store.createProject({ name: 'victim' });
  const victimStream = s.store.createLogStream(victim.id, 'secrets');
  await s.store.logTraces(victim.id, {
    log_stream_id: victimStream.id,
    traces: Array.from({ length: 4 }, (_, i) => ({
      name: `${SECRET}-${i}`,
      input: `${SECRET} input`,
      output: SECRET,
      tags: [SECRET],
      metrics: { [SECRET]: i },
      user_metadata: { [SECRET]: SECRET },
      spans: [
        {
          type: 'llm' as const,
          name: SECRET,
          input: [{ role: 'user', content: SECRET }],
          output: { role: 'assistant', content: SECRET },
          metrics: { score: 1 },
        },
      ],
    })),
  });
  // The attacker's own project: ordinary records, then ingest with payloads in every name and key.
  await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    traces: [{ name: 'plain', input: 'q', output: 'a', spans: [{ type: 'tool', name: 'tool', input: 'x', metrics: { score: 0.5 } }] }],
  });
  const ingested = await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    traces: PAYLOADS.map((p, i) => ({
      name: p,
      input: p,
      output: p,
      tags: [p],
      user_metadata: { [p]: p, [`k${i}`]: p },
      dataset_metadata: { [p]: i },
      metrics: { [p]: i + 1 },
      spans: [{ type: 'tool', name: p, input: p, tool_call_id: p, metrics: { [p]: i + 1 } }],
    })),
  });
  assert.equal(ingested.status, 200, JSON.stringify(ingested.body).slice(0, 500));
  const before = { mine: await counts(s.store, s.projectId), victim: await scan(s.store, 'span', victim.id) };
  for (const level of ['span', 'trace', 'session'] as const)
    for (const r of await scan(s.store, level, victim.id)) victimIds.add(String(r['id']));
  const victimTraces = await scan(s.store, 'trace', victim.id);
  const filesBefore = new Set(readdirSync(tmpdir()));

  const seen: Seen = { requests: 0, statuses: new Map() };
  // Every payload in every position at the span level (count, search, delete); a core set of payloads
  // in every position at the other levels, in partial search, and again once everything is sealed.
  const CORE = new Set([
    "'; DROP TABLE mem; --",
    "' OR '1'='1",
    "'; COPY (SELECT 1) TO '/tmp/tracelake-pwned.csv'; --",
    '$1',
    `'${SECRET}'`,
  ]);
  const parallel = async (jobs: (() => Promise<unknown>)[]) => {
    for (let i = 0; i < jobs.length; i += 4) await Promise.all(jobs.slice(i, i + 4).map((j) => j()));
  };
  for (const sealed of [false, true]) {
    if (sealed) await s.store.flush();
    for (const [i, p] of [...PAYLOADS, ...QUERY_ONLY].entries()) {
      current = p;
      const core = CORE.has(p);
      if (sealed && !core) continue;
      const jobs: (() => Promise<unknown>)[] = [];
      for (const level of LEVELS) {
        if (level !== 'spans' && !core) continue;
        if (sealed && level === 'sessions') continue;
        const base = `/projects/${s.projectId}/${level}`;
        for (const { where, body } of bodies(p, ls, false)) {
          const what = `${level} ${where} ${JSON.stringify(p)}${sealed ? ' (sealed)' : ''}`;
          jobs.push(() => attack(s, seen, 'POST', `${base}/count`, body, `count: ${what}`));
          if (core) jobs.push(() => attack(s, seen, 'POST', `${base}/search`, body, `search: ${what}`));
          if (core && !sealed)
            jobs.push(() =>
              attack(
                s,
                seen,
                'POST',
                `${base}/partial_search`,
                { ...body, select_columns: { column_ids: ['name', `metrics/${p}`], include_all_metrics: true } },
                `partial_search: ${what}`,
              ),
            );
        }
        for (const { where, body } of searchBodies(p, ls)) {
          jobs.push(() => attack(s, seen, 'POST', `${base}/search`, body, `search ${level} ${where} ${JSON.stringify(p)}`));
          if (core)
            jobs.push(() =>
              attack(s, seen, 'POST', `${base}/partial_search`, body, `partial_search ${level} ${where} ${JSON.stringify(p)}`),
            );
        }
        if (sealed) continue;
        // Deletes whose filters cannot match anything in the attacker's project: nothing may go.
        for (const { where, body } of bodies(`${p}-never-stored`, ls, true)) {
          jobs.push(async () => {
            const r = await attack(s, seen, 'POST', `${base}/delete`, body, `delete ${level} ${where} ${JSON.stringify(p)}`);
            if (r.status === 200)
              assert.deepEqual(r.body, { message: 'Deleted 0 records' }, `delete ${level} ${where} ${JSON.stringify(p)}`);
          });
        }
        for (const body of [{ log_stream_id: p }, { log_stream_id: ls, start_time: p, end_time: p }, { [p]: p }]) {
          jobs.push(() =>
            attack(s, seen, 'POST', `${base}/available_columns`, body, `available_columns ${level} ${JSON.stringify(body).slice(0, 80)}`),
          );
        }
      }
      await parallel(jobs);
      if (i >= PAYLOADS.length) continue;
      // What was stored under a hostile name is found by exactly that name, sorted and selected by it.
      const found = await attack(
        s,
        seen,
        'POST',
        `/projects/${s.projectId}/traces/search`,
        { log_stream_id: ls, filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: p }] },
        `find ${JSON.stringify(p)}`,
      );
      assert.deepEqual(
        found.body.records.map((r: any) => r.name),
        [p],
        `the trace named ${JSON.stringify(p)}`,
      );
      const byMetric = await attack(
        s,
        seen,
        'POST',
        `/projects/${s.projectId}/spans/count`,
        { log_stream_id: ls, filters: [{ type: 'number', column_id: `metrics/${p}`, operator: 'eq', value: i + 1 }] },
        `metric ${JSON.stringify(p)}`,
      );
      assert.equal(byMetric.body.total_count, 1, `the span with metric ${JSON.stringify(p)}`);
      const sorted = await attack(
        s,
        seen,
        'POST',
        `/projects/${s.projectId}/spans/partial_search`,
        {
          log_stream_id: ls,
          sort: { column_id: `metrics/${p}`, ascending: false },
          limit: 1,
          select_columns: { column_ids: [`metrics/${p}`] },
        },
        `sort by metric ${JSON.stringify(p)}`,
      );
      assert.equal(sorted.status, 200);
      assert.equal(
        sorted.body.records[0]?.metrics?.[p],
        i + 1,
        `sorted by metrics/${JSON.stringify(p)}: its span comes first with the value selected`,
      );
      const tagged = await attack(
        s,
        seen,
        'POST',
        `/projects/${s.projectId}/traces/count`,
        { log_stream_id: ls, filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: p }] },
        `tag ${JSON.stringify(p)}`,
      );
      assert.equal(tagged.body.total_count, 1, `the trace tagged ${JSON.stringify(p)}`);
    }
    current = '';
    const cols = await attack(
      s,
      seen,
      'POST',
      `/projects/${s.projectId}/spans/available_columns`,
      { log_stream_id: ls },
      'available columns',
    );
    const ids = new Set(cols.body.columns.map((c: any) => c.id));
    for (const p of PAYLOADS) assert.ok(ids.has(`metrics/${p}`), `available_columns lists metrics/${JSON.stringify(p)}`);
  }
  t.diagnostic(`${seen.requests} injection requests; statuses ${[...seen.statuses].map(([k, v]) => `${k}:${v}`).join(' ')}`);

  // Nothing was deleted, nothing leaked, no file was written anywhere.
  for (const f of PWNED) assert.ok(!existsSync(f), `${f} was not created`);
  const newFiles = readdirSync(tmpdir()).filter((f) => !filesBefore.has(f) && /pwned/.test(f));
  assert.deepEqual(newFiles, [], 'no file appeared in the temporary folder');
  const check = async (store: TraceStore, when: string) => {
    assert.deepEqual(await counts(store, s.projectId), before.mine, `${when}: the attacker's project is unchanged`);
    assert.deepEqual(await scan(store, 'span', victim.id), before.victim, `${when}: the victim's spans are exactly as before`);
    assert.deepEqual(await scan(store, 'trace', victim.id), victimTraces, `${when}: the victim's traces are exactly as before`);
    await assertConsistent(store, s.projectId, `${when}: attacker`);
    await assertConsistent(store, victim.id, `${when}: victim`);
  };
  await check(s.store, 'live');
  await s.store.close();
  const again = await TraceStore.open(s.dir);
  try {
    await check(again, 'reopened');
  } finally {
    await again.close();
  }
});
