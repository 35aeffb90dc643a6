// Guarantees: search, partial search, count, delete and available_columns answer at every level over
// HTTP; every accepted request form runs, and every rejected one answers 422 with `loc` at the
// offending field and a message naming the allowed choices.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { everyKindTrace, startServer } from '../support/helpers.js';

const leaf = (f: Record<string, unknown>) => ({ filter: f });

test('accepted request forms all run', async (t) => {
  const s = await startServer(t);
  await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: s.logStreamId,
    traces: [everyKindTrace('a'), everyKindTrace('b')],
  });
  const ls = s.logStreamId;
  const accepted: [string, unknown, (b: any) => void][] = [
    [
      'name instead of column_id',
      { log_stream_id: ls, filters: [{ type: 'text', name: 'name', operator: 'eq', value: 'chat' }] },
      (b) => assert.equal(b.records.length, 2),
    ],
    [
      'pagination object',
      { log_stream_id: ls, pagination: { limit: 3, starting_token: 0 } },
      (b) => assert.equal(b.next_starting_token, 3),
    ],
    [
      'id filter without operator (defaults to eq)',
      { log_stream_id: ls, filters: [{ type: 'id', column_id: 'run_id', value: ls }] },
      (b) => assert.equal(b.records.length, 12),
    ],
    [
      'boolean without operator',
      { log_stream_id: ls, filters: [{ type: 'boolean', column_id: 'has_children', value: true }] },
      (b) => assert.equal(b.records.length, 4),
    ],
    [
      'tree with and/or/not',
      {
        log_stream_id: ls,
        filter_tree: {
          and: [
            leaf({ type: 'text', column_id: 'type', operator: 'one_of', value: ['llm', 'tool'] }),
            { not: leaf({ type: 'text', column_id: 'name', operator: 'eq', value: 'calc' }) },
          ],
        },
      },
      (b) => assert.equal(b.records.length, 2),
    ],
    [
      'filters ANDed with the tree',
      {
        log_stream_id: ls,
        filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
        filter_tree: { or: [leaf({ type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gt', value: 5 })] },
      },
      (b) => assert.equal(b.records.length, 2),
    ],
    [
      'between',
      { log_stream_id: ls, filters: [{ type: 'number', column_id: 'step_number', operator: 'between', value: [2, 3] }] },
      (b) => assert.equal(b.records.length, 4),
    ],
    [
      'date with a zone',
      { log_stream_id: ls, filters: [{ type: 'date', column_id: 'created_at', operator: 'gte', value: '2026-03-01T11:00:00.300+01:00' }] },
      (b) => assert.equal(b.records.length, 8),
    ],
    // The llm spans carry 12 tokens; their agent parents roll up the same 12 (sum): four ties first.
    [
      'sort by a metric, name spelling',
      { log_stream_id: ls, sort: { name: 'metrics/num_input_tokens', ascending: false } },
      (b) => assert.deepEqual(new Set(b.records.slice(0, 4).map((r: any) => r.type)), new Set(['llm', 'agent'])),
    ],
    [
      'extra keys are ignored',
      { log_stream_id: ls, project_id: s.projectId, truncate_fields: true, previous_last_row_id: null },
      (b) => assert.equal(b.records.length, 12),
    ],
    ['no run id: the whole project', {}, (b) => assert.equal(b.records.length, 12)],
  ];
  for (const [name, body, check] of accepted) {
    const r = await s.call('POST', `/projects/${s.projectId}/spans/search`, body);
    assert.equal(r.status, 200, `${name}: ${JSON.stringify(r.body).slice(0, 300)}`);
    check(r.body);
  }
});

test('rejected requests answer 422 at the offending field', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  const rejected: [string, unknown, string, RegExp][] = [
    [
      'unknown column with a hint',
      { log_stream_id: ls, filter_tree: { or: [leaf({ type: 'text', column_id: 'nmae', operator: 'eq', value: 'x' })] } },
      'body.filter_tree.or.0.filter.column_id',
      /did you mean "name"/,
    ],
    [
      'wrong filter kind for the column',
      { log_stream_id: ls, filters: [{ type: 'text', column_id: 'created_at', operator: 'eq', value: 'x' }] },
      'body.filters.0.type',
      /takes a date filter/,
    ],
    [
      'operator not allowed',
      { log_stream_id: ls, filters: [{ type: 'number', column_id: 'status_code', operator: 'contains', value: 5 }] },
      'body.filters.0.operator',
      /'eq', 'ne', 'gt'/,
    ],
    [
      'missing operator',
      { log_stream_id: ls, filters: [{ type: 'date', column_id: 'created_at', value: '2026-01-01' }] },
      'body.filters.0.operator',
      /operator/,
    ],
    [
      'unknown filter type',
      { log_stream_id: ls, filters: [{ type: 'regex', column_id: 'name', value: 'x' }] },
      'body.filters.0.type',
      /'text'/,
    ],
    [
      'bad date',
      { log_stream_id: ls, filters: [{ type: 'date', column_id: 'created_at', operator: 'gt', value: 'soon' }] },
      'body.filters.0.value',
      /datetime/,
    ],
    [
      'between needs two numbers',
      { log_stream_id: ls, filters: [{ type: 'number', column_id: 'status_code', operator: 'between', value: [5] }] },
      'body.filters.0.value',
      /two numbers/,
    ],
    [
      'between reversed',
      { log_stream_id: ls, filters: [{ type: 'number', column_id: 'status_code', operator: 'between', value: [5, 1] }] },
      'body.filters.0.value',
      /low <= high/,
    ],
    [
      'list for eq',
      { log_stream_id: ls, filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: ['a'] }] },
      'body.filters.0.value',
      /one_of/,
    ],
    ['node with two keys', { log_stream_id: ls, filter_tree: { and: [], or: [] } }, 'body.filter_tree', /exactly one/],
    [
      'too deep',
      {
        log_stream_id: ls,
        filter_tree: Array.from({ length: 40 }).reduce(
          (n) => ({ not: n }),
          leaf({ type: 'text', column_id: 'name', operator: 'eq', value: 'x' }),
        ),
      },
      'body.filter_tree',
      /nested more than/,
    ],
    ['sort on tags', { log_stream_id: ls, sort: { column_id: 'tags' } }, 'body.sort.column_id', /cannot be sorted/],
    ['limit too large', { log_stream_id: ls, limit: 100000 }, 'body.limit', /less than or equal/],
    ['bad run id', { log_stream_id: 'nope' }, 'body.log_stream_id', /UUID/],
    [
      'allowed values of type',
      { log_stream_id: ls, filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'lm' }] },
      'body.filters.0.value',
      /'llm'/,
    ],
  ];
  for (const [name, body, loc, msg] of rejected) {
    const r = await s.call('POST', `/projects/${s.projectId}/spans/search`, body);
    assert.equal(r.status, 422, `${name}: ${JSON.stringify(r.body).slice(0, 300)}`);
    const issue = r.body.detail.find((d: any) => d.loc.join('.').startsWith(loc));
    assert.ok(issue, `${name}: expected loc ${loc}, got ${JSON.stringify(r.body.detail)}`);
    assert.match(issue.msg, msg, name);
  }
  const del = await s.call('POST', `/projects/${s.projectId}/spans/delete`, {});
  assert.equal(del.status, 422, 'a delete with no run id and no filter is refused');
  assert.match(JSON.stringify(del.body), /refusing to delete/);
});

test('levels: traces and sessions endpoints, child counts, partial search columns, delete', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  const logged = await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    traces: [everyKindTrace('a'), everyKindTrace('b'), everyKindTrace('c')],
  });
  const traces = await s.call('POST', `/v2/projects/${s.projectId}/traces/partial_search`, {
    log_stream_id: ls,
    select_columns: { column_ids: ['name', 'metrics/num_input_tokens'] },
    include_counts: true,
    sort: { column_id: 'name', ascending: true },
  });
  assert.equal(traces.status, 200, JSON.stringify(traces.body));
  assert.deepEqual(
    traces.body.records.map((r: any) => r.name),
    ['trace-a', 'trace-b', 'trace-c'],
  );
  const first = traces.body.records[0];
  assert.deepEqual(
    Object.keys(first).sort(),
    ['id', 'metric_info', 'metrics', 'name', 'num_spans', 'project_id', 'run_id', 'session_id', 'trace_id', 'type'].sort(),
  );
  assert.equal(first.num_spans, 6);
  assert.deepEqual(first.metrics, {}, 'the trace has no own value');
  assert.deepEqual(first.metric_info.num_input_tokens, { status_type: 'roll_up', value: 12, roll_up_method: 'sum' });
  const sessions = await s.call('POST', `/projects/${s.projectId}/sessions/search`, { log_stream_id: ls, include_counts: true });
  assert.equal(sessions.body.records.length, 3);
  assert.equal(sessions.body.records[0].num_traces, 1);
  const cols = await s.call('POST', `/projects/${s.projectId}/spans/available_columns`, { log_stream_id: ls });
  const ids = cols.body.columns.map((c: any) => c.id);
  for (const id of ['input', 'output', 'created_at', 'tags', 'metrics/num_input_tokens', 'metrics/custom_score'])
    assert.ok(ids.includes(id), id);
  const metric = cols.body.columns.find((c: any) => c.id === 'metrics/custom_score');
  assert.equal(metric.category, 'metric');
  assert.equal(metric.filter_type, 'number');
  assert.ok(!('sql' in metric), 'internal fields stay internal');
  const tags = cols.body.columns.find((c: any) => c.id === 'tags');
  assert.deepEqual([tags.multi_valued, tags.sortable, tags.data_type], [true, false, 'string_list']);
  const traceCols = await s.call('POST', `/projects/${s.projectId}/traces/available_columns`, { log_stream_id: ls });
  assert.ok(!traceCols.body.columns.some((c: any) => c.id === 'model'), 'llm-only columns are not trace columns');
  // Deleting the workflow span of trace a takes its two children with it.
  const wf = await s.call('POST', `/projects/${s.projectId}/spans/search`, {
    log_stream_id: ls,
    filters: [
      { type: 'text', column_id: 'name', operator: 'eq', value: 'lookup' },
      { type: 'id', column_id: 'trace_id', value: logged.body.trace_ids[0] },
    ],
  });
  assert.equal(wf.body.records.length, 1);
  const del = await s.call('POST', `/projects/${s.projectId}/spans/delete`, {
    log_stream_id: ls,
    filters: [{ type: 'id', column_id: 'id', value: wf.body.records[0].id }],
  });
  assert.deepEqual(del.body, { message: 'Deleted 3 records' });
  assert.equal((await s.call('POST', `/projects/${s.projectId}/spans/count`, { log_stream_id: ls })).body.total_count, 15);
  // Deleting a whole trace removes its spans; its session stays.
  const delTrace = await s.call('POST', `/projects/${s.projectId}/traces/delete`, {
    log_stream_id: ls,
    filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'trace-b' }],
  });
  assert.deepEqual(delTrace.body, { message: 'Deleted 7 records' });
  assert.equal((await s.call('POST', `/projects/${s.projectId}/spans/count`, { log_stream_id: ls })).body.total_count, 9);
  assert.equal((await s.call('POST', `/projects/${s.projectId}/sessions/count`, { log_stream_id: ls })).body.total_count, 3);
});

test('available_columns: a scorer enabled in the run has its column before any record carries it; scorer metrics are described by the scorer', async (t) => {
  const s = await startServer(t);
  const ls = s.logStreamId;
  await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: ls,
    traces: [{ name: 't', spans: [{ type: 'llm', input: [{ role: 'user', content: 'q' }], metrics: { correctness: 0.9 } }] }],
  });
  const enable = await s.call('PUT', `/projects/${s.projectId}/runs/${ls}/scorer-settings`, { scorers: [{ name: 'bleu' }] });
  assert.equal(enable.status, 200, JSON.stringify(enable.body));
  const cols = (await s.call('POST', `/projects/${s.projectId}/spans/available_columns`, { log_stream_id: ls })).body.columns;
  const bleu = cols.find((c: any) => c.id === 'metrics/bleu');
  assert.ok(bleu, 'enabled scorer listed');
  assert.equal(bleu.is_empty, true);
  assert.equal(bleu.label, 'BLEU');
  const correctness = cols.find((c: any) => c.id === 'metrics/correctness');
  assert.equal(correctness.is_empty, false);
  assert.equal(correctness.label, 'Correctness');
});
