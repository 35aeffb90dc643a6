// Guarantees: the roll-ups a page shows (metric_info, status roll_up) are the same whether the page's
// traces and ids go to DuckDB as an IN list of placeholders (up to 256 of them) or as a semi-join on a
// list parameter (longer pages), and equal the values computed here from what was logged: span pages
// (a workflow's roll-up climbs from its children) and trace pages, with rows in memory and sealed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { tempDir } from '../../support/helpers.js';

const N = 300;
const llmQuality = (i: number) => 0.2 + 0.1 * (i % 7);

function traces(): Record<string, unknown>[] {
  return Array.from({ length: N }, (_, i) => ({
    name: `t${String(i).padStart(3, '0')}`,
    input: 'q',
    created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    spans: [
      {
        type: 'workflow',
        name: `wf${String(i).padStart(3, '0')}`,
        input: 'x',
        spans: [
          { type: 'llm', name: 'call', input: 'x', model: 'gpt-4o', metrics: { quality: llmQuality(i) } },
          { type: 'tool', name: 'tool', input: 'x', metrics: { quality: 0.9 } },
        ],
      },
    ],
  }));
}

test('page roll-ups agree between short and long pages, and with the logged values', async (t) => {
  const store = await TraceStore.open(tempDir(t), { threads: 1 });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'p' }).id;
  const runId = store.createLogStream(projectId, 'r').id;
  await store.logTraces(projectId, { log_stream_id: runId, reliable: true, traces: traces() } as never);
  const shown = async (level: 'span' | 'trace', filters: unknown[], limit: number, offset: number) => {
    const body = {
      log_stream_id: runId,
      filters,
      sort: { column_id: 'name', ascending: true },
      pagination: { starting_token: offset, limit },
      select_columns: { column_ids: ['id', 'name'], metric_columns_names: ['quality'] },
    };
    const out = new Map<string, { status: string; value: number }>();
    for (const r of (await store.partialSearch(level, projectId, body as never)).records) {
      const info = (r['metric_info'] as Record<string, { status_type: string; value: number }> | null)?.['quality'];
      assert.ok(info, `${level} ${String(r['name'])} shows quality`);
      out.set(String(r['name']), { status: info.status_type, value: info.value });
    }
    return out;
  };
  const cases = [
    {
      level: 'span' as const,
      filters: [{ type: 'text', column_id: 'type', operator: 'eq', value: 'workflow' }],
      name: (i: number) => `wf${String(i).padStart(3, '0')}`,
      want: (i: number) => (llmQuality(i) + 0.9) / 2,
    },
    {
      level: 'trace' as const,
      filters: [],
      name: (i: number) => `t${String(i).padStart(3, '0')}`,
      want: (i: number) => (llmQuality(i) + 0.9) / 2,
    },
  ];
  for (const sealed of [false, true]) {
    if (sealed) await store.flush();
    for (const c of cases) {
      const long = await shown(c.level, c.filters, N, 0);
      assert.equal(long.size, N);
      const short = new Map<string, { status: string; value: number }>();
      for (let at = 0; at < N; at += 100) for (const [k, v] of await shown(c.level, c.filters, 100, at)) short.set(k, v);
      assert.deepEqual(short, long, `${c.level} sealed=${sealed}`);
      for (let i = 0; i < N; i++) {
        const got = long.get(c.name(i))!;
        assert.equal(got.status, 'roll_up');
        assert.ok(Math.abs(got.value - c.want(i)) < 1e-9, `${c.level} ${c.name(i)}: ${got.value} vs ${c.want(i)} sealed=${sealed}`);
      }
    }
  }
});
