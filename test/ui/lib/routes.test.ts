// Guarantees every viewer screen's state survives a trip through its URL, and bad parameters fall back to defaults.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRoute, routeUrl, runTable, type Route } from '../../../src/ui/lib/routes.js';

const roundTrip = (r: Route): Route => {
  const url = new URL(routeUrl(r), 'http://x');
  return parseRoute(url.pathname, url.search);
};

test('each screen round-trips through its URL', () => {
  const filter = {
    and: [
      { filter: { type: 'text', column_id: 'name', operator: 'contains', value: 'a&b=c #?' } },
      { not: { filter: { type: 'number', column_id: 'metrics/duration_ns', operator: 'between', value: [1, 2e9] } } },
    ],
  };
  const routes: Route[] = [
    { name: 'projects', page: 1 },
    { name: 'projects', page: 3 },
    { name: 'project', projectId: 'p1' },
    runTable('p1', 'ls', 'r1'),
    {
      name: 'table',
      projectId: 'p1',
      runKind: 'exp',
      runId: 'r/2',
      level: 'spans',
      query: {
        sort: { column: 'metrics/num_total_tokens', ascending: true },
        cols: ['name', 'metrics/correctness'],
        filter,
        page: 4,
        size: 25,
      },
    },
    {
      name: 'table',
      projectId: 'p1',
      runKind: 'ls',
      runId: 'r1',
      level: 'sessions',
      query: { sort: { column: 'created_at', ascending: false }, cols: null, filter: null, page: 1, size: 200 },
    },
    { name: 'trace', projectId: 'p1', traceId: 't1', spanId: null, tab: 'overview' },
    { name: 'trace', projectId: 'p1', traceId: 't1', spanId: 's9', tab: 'raw' },
    { name: 'session', projectId: 'p1', sessionId: 's1' },
    { name: 'overview', projectId: 'p1', runKind: 'ls', runId: 'r/1', range: { kind: 'all' } },
    { name: 'scorers', projectId: 'p1', runKind: 'exp', runId: 'r/1' },
    { name: 'overview', projectId: 'p1', runKind: 'exp', runId: 'r1', range: { kind: 'last', span: 'week' } },
    {
      name: 'overview',
      projectId: 'p1',
      runKind: 'ls',
      runId: 'r1',
      range: { kind: 'custom', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
    },
    {
      name: 'compare',
      projectId: 'p1',
      runs: [
        { kind: 'ls', id: 'a' },
        { kind: 'exp', id: 'b:c' },
      ],
    },
  ];
  for (const r of routes) assert.deepEqual(roundTrip(r), r);
});

test('defaults are left out of the URL', () => {
  assert.equal(routeUrl(runTable('p', 'ls', 'r')), '/ui/p/p/ls/r/traces');
  assert.equal(routeUrl({ name: 'projects', page: 1 }), '/ui/');
  assert.equal(routeUrl({ name: 'trace', projectId: 'p', traceId: 't', spanId: null, tab: 'overview' }), '/ui/p/p/traces/t');
});

test('bad parameters fall back to defaults; unknown paths are not found', () => {
  const r = parseRoute('/ui/p/p/ls/r/traces', '?page=-2&size=7&f=%7Bnot-json&sort=name');
  assert.equal(r.name, 'table');
  if (r.name !== 'table') return;
  assert.deepEqual(r.query, { sort: { column: 'name', ascending: false }, cols: null, filter: null, page: 1, size: 50 });
  assert.equal(
    parseRoute('/ui/p/p/traces/t', '?tab=nope').name === 'trace' && (parseRoute('/ui/p/p/traces/t', '?tab=nope') as { tab: string }).tab,
    'overview',
  );
  assert.equal(parseRoute('/ui/p/p/ls/r/bogus', '').name, 'not-found');
  assert.deepEqual(parseRoute('/ui/p/p/ls/r/overview', '?range=year&from=nope&to=2026-01-01'), {
    name: 'overview',
    projectId: 'p',
    runKind: 'ls',
    runId: 'r',
    range: { kind: 'all' },
  });
  assert.deepEqual(parseRoute('/ui/p/p/compare', '?runs=ls:a,xx:b,exp:,ls:a,exp:c'), {
    name: 'compare',
    projectId: 'p',
    runs: [
      { kind: 'ls', id: 'a' },
      { kind: 'exp', id: 'c' },
    ],
  });
  assert.equal(parseRoute('/ui/x', '').name, 'not-found');
  assert.equal(parseRoute('/ui', '').name, 'projects');
  assert.equal(parseRoute('/ui/', '?page=2').name === 'projects' && (parseRoute('/ui/', '?page=2') as { page: number }).page, 2);
});
