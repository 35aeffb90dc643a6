// Guarantees: one_of / not_in with a long list (matched by a semi-join) select exactly what the same
// values select in a short list (matched by list_contains), missing values and case included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LONG_LIST } from '../../src/query/compile-filter.js';
import { everyKindTrace, openStore } from '../support/helpers.js';

test('long and short value lists agree', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const traceIds: string[] = [];
  for (let i = 0; i < 6; i++)
    traceIds.push(
      ...(await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace(`l${i}`) as never] })).trace_ids,
    );
  const L = { log_stream_id: logStreamId };
  const filler = Array.from({ length: LONG_LIST + 5 }, (_, i) => `no-such-${i}`);
  // Six traces of six spans each: planner, chat (llm, the only span with a model), lookup, search, calc, guard.
  const TOTAL = 36;
  for (const sealed of [false, true]) {
    if (sealed) await store.flush();
    // Each list selects some spans but not all, so neither operator can agree by selecting nothing
    // (or everything) on both paths.
    for (const [column, values, cs, matches] of [
      ['name', ['chat', 'CALC'], false, 12],
      ['name', ['chat', 'calc'], true, 12],
      ['model', ['gpt-4o'], true, 6], // null for every span but llm ones: those match not_in
      ['trace_id', traceIds.slice(0, 2), true, 12],
    ] as const) {
      for (const [operator, want] of [
        ['one_of', matches],
        ['not_in', TOTAL - matches],
      ] as const) {
        const type = column === 'trace_id' ? 'id' : 'text';
        const body = (v: readonly string[]) => ({
          ...L,
          filters: [{ type, column_id: column, operator, value: [...v], ...(type === 'text' ? { case_sensitive: cs } : {}) }],
        });
        const short = (await store.count('span', projectId, body(values))).total_count;
        const long = (await store.count('span', projectId, body([...values, ...filler]))).total_count;
        const what = `${column} ${operator} ${JSON.stringify(values)} cs=${cs} sealed=${sealed}`;
        assert.equal(short, want, `${what}: the short list`);
        assert.equal(long, want, `${what}: the long list`);
      }
    }
  }
});
