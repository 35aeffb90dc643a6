// Guarantees: search, partial search, count and delete check what they share (filters, filter tree, run
// ids) on one path, so the same bad body gets the same 422 from all four at every level; count and
// delete ignore a `sort` (not part of their contract) whatever its shape; offsets too large for the
// database answer 422 at the field, never 500 (the two classes of 500 found by the hostile sweep).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { everyKindTrace, startServer } from '../support/helpers.js';

const LEVELS = ['spans', 'traces', 'sessions'] as const;
const ROUTES = ['search', 'partial_search', 'count', 'delete'] as const;

test('the four record routes answer the same 422 for the same bad shared field, at every level', async (t) => {
  const s = await startServer(t);
  const bad: [unknown, (string | number)[]][] = [
    [{ filters: [{ type: 'text', column_id: [1], operator: 'eq', value: 'x' }] }, ['body', 'filters', 0, 'column_id']],
    [{ filters: [{ type: 'nope', column_id: 'name', value: 'x' }] }, ['body', 'filters', 0, 'type']],
    [
      { filter_tree: { and: [{ filter: { type: 'number', column_id: 'name', operator: 'eq', value: 1 } }] } },
      ['body', 'filter_tree', 'and', 0, 'filter', 'type'],
    ],
    [{ filter_tree: 5 }, ['body', 'filter_tree']],
    [{ log_stream_id: 'not-a-uuid' }, ['body', 'log_stream_id']],
    [{ filters: 'x' }, ['body', 'filters']],
  ];
  for (const level of LEVELS) {
    for (const [extra, loc] of bad) {
      const answers = await Promise.all(
        ROUTES.map((r) =>
          s.call('POST', `/v2/projects/${s.projectId}/${level}/${r}`, {
            log_stream_id: s.logStreamId,
            ...(r === 'partial_search' ? { select_columns: {} } : {}),
            ...(extra as object),
          }),
        ),
      );
      for (const [i, a] of answers.entries()) {
        assert.equal(a.status, 422, `${level}/${ROUTES[i]} ${JSON.stringify(extra)}: ${JSON.stringify(a.body)}`);
        assert.ok(
          a.body.detail.some((d: { loc: unknown[] }) => JSON.stringify(d.loc) === JSON.stringify(loc)),
          `${level}/${ROUTES[i]} names ${loc.join('.')}: ${JSON.stringify(a.body)}`,
        );
      }
      assert.deepEqual(
        answers.map((a) => a.body),
        answers.map(() => answers[0]!.body),
        `${level}: one message for ${JSON.stringify(extra)}`,
      );
    }
  }
});

test('count and delete ignore a sort of any shape; the searches check it at the field', async (t) => {
  const s = await startServer(t);
  await s.call('POST', `/projects/${s.projectId}/traces`, {
    log_stream_id: s.logStreamId,
    traces: [everyKindTrace('a'), everyKindTrace('b')],
  });
  for (const level of LEVELS) {
    const plain = await s.call('POST', `/v2/projects/${s.projectId}/${level}/count`, { log_stream_id: s.logStreamId });
    assert.equal(plain.status, 200);
    assert.ok(plain.body.total_count > 0);
    for (const sort of [{ column_id: [1] }, 5, 'x', [], { column_id: 'no_such_column' }, { ascending: 'yes' }]) {
      const c = await s.call('POST', `/v2/projects/${s.projectId}/${level}/count`, { log_stream_id: s.logStreamId, sort });
      assert.deepEqual(c, plain, `${level} count with sort ${JSON.stringify(sort)}`);
      const d = await s.call('POST', `/v2/projects/${s.projectId}/${level}/delete`, {
        log_stream_id: s.logStreamId,
        sort,
        filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 'matches nothing' }],
      });
      assert.equal(d.status, 200, `${level} delete with sort ${JSON.stringify(sort)}: ${JSON.stringify(d.body)}`);
      for (const r of ['search', 'partial_search'] as const) {
        const q = await s.call('POST', `/v2/projects/${s.projectId}/${level}/${r}`, {
          log_stream_id: s.logStreamId,
          sort,
          select_columns: {},
        });
        assert.equal(q.status, 422, `${level}/${r} sort ${JSON.stringify(sort)}`);
        assert.ok(
          q.body.detail.every((d: { loc: unknown[] }) => d.loc[0] === 'body' && d.loc[1] === 'sort'),
          JSON.stringify(q.body),
        );
      }
    }
  }
  const after = await s.call('POST', `/v2/projects/${s.projectId}/traces/count`, { log_stream_id: s.logStreamId });
  assert.equal(after.body.total_count, 2, 'deletes that match nothing deleted nothing');
});

test('offsets and page sizes beyond the bounds answer 422 at the field on both searches at every level', async (t) => {
  const s = await startServer(t);
  const cases: [Record<string, unknown>, (string | number)[]][] = [
    [{ starting_token: 1e300 }, ['body', 'starting_token']],
    [{ starting_token: 2 ** 63 }, ['body', 'starting_token']],
    [{ pagination: { starting_token: 1e20 } }, ['body', 'pagination', 'starting_token']],
    [{ limit: 1001 }, ['body', 'limit']],
    [{ pagination: { limit: 1e9 } }, ['body', 'pagination', 'limit']],
  ];
  for (const level of LEVELS) {
    for (const r of ['search', 'partial_search'] as const) {
      for (const [extra, loc] of cases) {
        const a = await s.call('POST', `/projects/${s.projectId}/${level}/${r}`, {
          log_stream_id: s.logStreamId,
          select_columns: {},
          ...extra,
        });
        assert.equal(a.status, 422, `${level}/${r} ${JSON.stringify(extra)}: ${JSON.stringify(a.body)}`);
        assert.deepEqual(
          a.body.detail.map((d: { loc: unknown }) => d.loc),
          [loc],
        );
      }
      const edge = await s.call('POST', `/projects/${s.projectId}/${level}/${r}`, {
        log_stream_id: s.logStreamId,
        select_columns: {},
        starting_token: Number.MAX_SAFE_INTEGER,
        limit: 1000,
      });
      assert.equal(edge.status, 200, `${level}/${r} at the largest offset`);
      assert.deepEqual(edge.body.records, []);
    }
  }
});
