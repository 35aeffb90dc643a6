// Guarantees: a Python code scorer (as createCustomCodeMetric uploads it) is stored and reported
// not_computed while the runner is off; with the runner on, python3 runs scorer_fn once per record
// with the hosted service's keyword arguments, numbers and booleans become values, an exception fails
// only its record, and code that cannot load or runs past the time limit fails the batch with why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runPython } from '../../src/scoring/python.js';
import { openStore } from '../support/helpers.js';

const CODE = `
def scorer_fn(*, index, node_input, node_output, dataset_variables, **kwargs):
    if node_output == "boom":
        raise ValueError("cannot score boom")
    if node_output == "yes":
        return True
    return len(node_output) / 10
`;

function traceOf(outputs: string[]) {
  return {
    type: 'trace',
    name: 't',
    input: 'q',
    spans: outputs.map((o, i) => ({ type: 'llm', name: `l${i}`, input: 'q', output: o, dataset_output: 'ref' })),
  };
}

test('python scorers: not computed while the runner is off, computed per record when it is on', async (t) => {
  for (const python of [false, true]) {
    const { store, projectId, logStreamId } = await openStore(t, { scoring: { python } });
    store.catalog.createScorer({ name: 'py_len', scorer_type: 'code', version: { code: CODE } } as never);
    store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'py_len' }] });
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [traceOf(['abcde', 'yes', 'boom'])] as never });
    await store.scorers.idle();
    const page = await store.search('span', projectId, { log_stream_id: logStreamId, limit: 10 });
    const by = new Map((page.records as Record<string, any>[]).map((r) => [r['output']?.content ?? r['output'], r]));
    if (!python) {
      for (const r of by.values()) {
        assert.equal(r['metric_info'].py_len.status_type, 'not_computed');
        assert.match(r['metric_info'].py_len.message, /--python-scorers/);
      }
      continue;
    }
    assert.equal(by.get('abcde')!['metrics'].py_len, 0.5);
    assert.equal(by.get('yes')!['metrics'].py_len, 1);
    assert.equal(by.get('boom')!['metric_info'].py_len.status_type, 'failed');
    assert.match(by.get('boom')!['metric_info'].py_len.message, /cannot score boom/);
  }
});

test('python code that does not load, or runs too long, fails the batch with the reason', async () => {
  await assert.rejects(runPython('def scorer_fn(:', [{ node_output: 'x' }]), /could not be loaded: SyntaxError/);
  await assert.rejects(
    runPython('import time\ndef scorer_fn(**kw):\n    time.sleep(5)\n', [{ node_output: 'x' }], { timeoutMs: 300 }),
    /more than 300 ms/,
  );
  const ok = await runPython('def scorer_fn(*, index, node_output, **kw):\n    print("noise")\n    return index', [
    { node_output: 'a' },
    { node_output: 'b' },
  ]);
  assert.deepEqual(ok, [{ value: 0 }, { value: 1 }]);
});
