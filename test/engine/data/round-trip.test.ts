// Guarantees: export then import into a new folder answers every search, count and roll-up the same,
// in each format; importing the same file again changes nothing (ids are kept); JSON lines of v2
// logging bodies import like the requests they are; a bad file imports nothing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TraceStore } from '../../../src/engine/trace-store.js';
import type { ExportFormat } from '../../../src/engine/data/export.js';
import { InvalidRequestError } from '../../../src/errors.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';

type Rec = Record<string, unknown>;

/** Records without the ids of the folder's own project and run (a new folder mints new ones). */
function portable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(portable);
  if (v && typeof v === 'object') {
    const out: Rec = {};
    for (const [k, x] of Object.entries(v as Rec)) if (k !== 'project_id' && k !== 'run_id' && k !== 'log_stream_id') out[k] = portable(x);
    return out;
  }
  return v;
}

const QUESTIONS: { level: 'span' | 'trace' | 'session'; body: Rec }[] = [
  { level: 'span', body: {} },
  { level: 'trace', body: { include_counts: true } },
  { level: 'session', body: { include_counts: true } },
  { level: 'span', body: { filters: [{ type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gt', value: 5 }] } },
  {
    level: 'trace',
    body: {
      filters: [{ type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gte', value: 12 }],
      sort: { column_id: 'metrics/num_input_tokens', ascending: false },
    },
  },
  {
    level: 'span',
    body: {
      filter_tree: {
        or: [
          { filter: { type: 'text', column_id: 'name', operator: 'contains', value: 'a' } },
          { filter: { type: 'collection', column_id: 'tags', operator: 'contains', value: 't1' } },
        ],
      },
    },
  },
];

async function answers(store: TraceStore, projectId: string): Promise<unknown> {
  const out: unknown[] = [];
  for (const q of QUESTIONS) {
    const page = await store.search(q.level, projectId, {
      ...q.body,
      limit: 1000,
      ...(q.body['sort'] ? {} : { sort: { column_id: 'created_at', ascending: true } }),
    } as never);
    out.push(portable(page.records));
    out.push((await store.count(q.level, projectId, q.body as never)).total_count);
  }
  out.push(await store.data.sql('SELECT type, count(*) AS n, sum(num_input_tokens) AS tokens FROM spans GROUP BY type ORDER BY type'));
  return out;
}

async function source(t: Parameters<typeof openStore>[0]) {
  const fx = await openStore(t);
  const { store, projectId, logStreamId } = fx;
  const traces = ['a', 'b', 'c', 'd'].map((x) => everyKindTrace(x) as any);
  traces[1].session_id = undefined;
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: traces.slice(0, 2) });
  await store.flush();
  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: traces.slice(2) });
  await store.records.delete('span', projectId, {
    log_stream_id: logStreamId,
    filters: [
      { type: 'text', column_id: 'name', operator: 'eq', value: 'guard' },
      { type: 'text', column_id: 'input', operator: 'eq', value: 'check' },
    ],
  } as never);
  const [one] = (await store.search('trace', projectId, { log_stream_id: logStreamId, limit: 1 })).records;
  await store.records.updateRecord('trace', projectId, String(one!['id']), {
    log_stream_id: logStreamId,
    output: 'revised',
    tags: ['x'],
  } as never);
  return fx;
}

for (const format of ['parquet', 'jsonl', 'arrow'] as ExportFormat[]) {
  test(`a ${format} export imported into a new folder answers the same, and again changes nothing`, async (t) => {
    const { store, projectId } = await source(t);
    const expected = await answers(store, projectId);
    const file = join(tempDir(t), `all.${format}`);
    const { rows } = await store.data.exportFile(projectId, file, { format });
    const target = await openStore(t, {}, join(tempDir(t), 'b'));
    const first = await target.store.data.importFile(file, { project: 'test-project', logStream: 'default', batchRows: 7 });
    assert.equal(first.records, rows);
    assert.equal(first.projectId, target.projectId, 'the named project is used, not a new one');
    assert.deepEqual(await answers(target.store, target.projectId), expected);
    await target.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
    assert.deepEqual(await answers(target.store, target.projectId), expected, 'a second import changes nothing');
    await target.store.flush();
    assert.deepEqual(await answers(target.store, target.projectId), expected, 'sealed, the same');
  });
}

test('JSON lines of v2 bodies import as the requests they are, into a project created on the way', async (t) => {
  const { store, dir } = await openStore(t);
  const file = join(dir, '..', 'bodies.jsonl');
  writeFileSync(
    file,
    [JSON.stringify({ traces: [everyKindTrace('a')] }), '', JSON.stringify({ traces: [everyKindTrace('b'), everyKindTrace('c')] })].join(
      '\n',
    ),
  );
  const res = await store.data.importFile(file, { project: 'imported', logStream: 'bodies' });
  assert.equal(res.bodies, 2);
  assert.equal((await store.count('span', res.projectId, {})).total_count, 18);
  await store.data.importFile(file, { project: 'imported', logStream: 'bodies' });
  assert.equal((await store.count('span', res.projectId, {})).total_count, 18, 'minted ids are stable: the same bodies replace themselves');
});

test('a bad file imports nothing', async (t) => {
  const { store, dir } = await openStore(t);
  const bodies = join(dir, '..', 'bad.jsonl');
  writeFileSync(bodies, `${JSON.stringify({ traces: [everyKindTrace('a')] })}\nnot json\n`);
  await assert.rejects(store.data.importFile(bodies, { project: 'p', logStream: 's' }), InvalidRequestError);
  const rows = join(dir, '..', 'rows.jsonl');
  const ok = { id: '0b6f6a4e-51cf-4bd8-9d2d-0cb1b0bcb4a1', type: 'trace', created_at: '2026-03-01 10:00:00' };
  writeFileSync(rows, `${JSON.stringify(ok)}\n${JSON.stringify({ ...ok, id: 'x2', type: 'banana' })}\n`);
  await assert.rejects(store.data.importFile(rows, { project: 'p', logStream: 's' }), /known type/);
  writeFileSync(rows, `${JSON.stringify(ok)}\n${JSON.stringify({ ...ok, id: 'not-a-uuid' })}\n`);
  await assert.rejects(store.data.importFile(rows, { project: 'p', logStream: 's' }), /a UUID/);
  await assert.rejects(store.data.importFile(join(dir, 'nope.parquet'), { project: 'p', logStream: 's' }), InvalidRequestError);
  const p = store.findProjects({ name: 'p' })[0]!;
  assert.equal(await store.records.countAll(p.id), 0);
});
