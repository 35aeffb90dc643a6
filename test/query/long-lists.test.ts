// Guarantees: one_of / not_in with a long list (matched by a semi-join) select exactly what the same
// values select in a short list (matched by list_contains), missing values and case included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LONG_LIST } from '../../src/query/compile-filter.js';
import { everyKindTrace, openStore } from '../support/helpers.js';

test('long and short value lists agree', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  for (let i = 0; i < 6; i++) await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace(`l${i}`) as never] });
  const L = { log_stream_id: logStreamId };
  const filler = Array.from({ length: LONG_LIST + 5 }, (_, i) => `no-such-${i}`);
  for (const sealed of [false, true]) {
    if (sealed) await store.flush();
    for (const [column, values, cs] of [
      ['name', ['chat', 'CALC'], false],
      ['name', ['chat', 'calc'], true],
      ['model', ['gpt-4o'], true], // null for every span but llm ones
      ['trace_id', [], true],
    ] as const) {
      for (const operator of ['one_of', 'not_in']) {
        const type = column === 'trace_id' ? 'id' : 'text';
        const body = (v: readonly string[]) => ({ ...L, filters: [{ type, column_id: column, operator, value: [...v], ...(type === 'text' ? { case_sensitive: cs } : {}) }] });
        const short = (await store.count('span', projectId, body(values))).total_count;
        const long = (await store.count('span', projectId, body([...values, ...filler]))).total_count;
        assert.equal(long, short, `${column} ${operator} ${JSON.stringify(values)} cs=${cs} sealed=${sealed}`);
      }
    }
  }
});
