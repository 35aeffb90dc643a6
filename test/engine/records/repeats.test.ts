// Guarantees: a request without ids logs new records every time it is sent (the same question twice is
// two traces); a retry with the same idempotency key is one request: it answers what the first attempt
// answered and logs nothing, in memory within the window and, after a restart, by finding the records
// the key's ids name; the same key with another body is refused (422 naming the key).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidRequestError } from '../../../src/errors.js';
import { IDEMPOTENCY_WINDOW_MS, IdempotencyKeys } from '../../../src/engine/records/idempotency.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { openStore, tempDir } from '../../support/helpers.js';

const body = (logStreamId: string) => ({
  log_stream_id: logStreamId,
  traces: [{ name: 'ask', input: 'what is 2+2?', output: '4', spans: [{ type: 'llm' as const, name: 'chat', input: 'q', output: 'a' }] }],
});

async function counts(store: TraceStore, projectId: string, logStreamId: string): Promise<[number, number, number]> {
  const n = async (level: 'trace' | 'span' | 'session') =>
    (await store.count(level, projectId, { log_stream_id: logStreamId })).total_count;
  return [await n('trace'), await n('span'), await n('session')];
}

test('the same request without ids, sent twice, is two traces with their own ids (also after a seal)', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const a = await store.logTraces(projectId, body(logStreamId));
  await store.flush();
  const b = await store.logTraces(projectId, body(logStreamId));
  assert.notDeepEqual(a.trace_ids, b.trace_ids);
  assert.deepEqual(await counts(store, projectId, logStreamId), [2, 2, 2]);
  const spans = await store.search('span', projectId, { log_stream_id: logStreamId });
  assert.equal(new Set(spans.records.map((r) => r['id'])).size, 2);
  // Log spans under a known parent: the same body twice is two spans too.
  const spansBody = {
    log_stream_id: logStreamId,
    trace_id: a.trace_ids[0]!,
    parent_id: a.trace_ids[0]!,
    spans: [{ type: 'tool' as const, name: 't' }],
  };
  await store.records.logSpans(projectId, spansBody);
  await store.records.logSpans(projectId, spansBody);
  assert.equal((await counts(store, projectId, logStreamId))[1], 4);
});

test('a retry with the same idempotency key answers the first answer and logs nothing; another key logs anew', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  const [first, concurrent] = await Promise.all([
    store.logTraces(projectId, body(logStreamId), { idempotencyKey: 'k-1' }),
    store.logTraces(projectId, body(logStreamId), { idempotencyKey: 'k-1' }),
  ]);
  const again = await store.logTraces(projectId, body(logStreamId), { idempotencyKey: 'k-1' });
  assert.deepEqual(concurrent, first);
  assert.deepEqual(again, first);
  assert.deepEqual(await counts(store, projectId, logStreamId), [1, 1, 1]);
  const other = await store.logTraces(projectId, body(logStreamId), { idempotencyKey: 'k-2' });
  assert.notDeepEqual(other.trace_ids, first.trace_ids);
  assert.deepEqual(await counts(store, projectId, logStreamId), [2, 2, 2]);
  // Keys are per project and route: the same key on log spans is another request.
  const spansBody = {
    log_stream_id: logStreamId,
    trace_id: first.trace_ids[0]!,
    parent_id: first.trace_ids[0]!,
    spans: [{ type: 'tool' as const, name: 't' }],
  };
  const s1 = await store.records.logSpans(projectId, spansBody, { idempotencyKey: 'k-1' });
  const s2 = await store.records.logSpans(projectId, spansBody, { idempotencyKey: 'k-1' });
  assert.deepEqual(s2, s1);
  assert.equal((await counts(store, projectId, logStreamId))[1], 3);
  const sess = { log_stream_id: logStreamId, name: 'chat' };
  const c1 = await store.records.createSession(projectId, sess, { idempotencyKey: 'k-1' });
  const c2 = await store.records.createSession(projectId, sess, { idempotencyKey: 'k-1' });
  assert.deepEqual(c2, c1);
  assert.equal((await counts(store, projectId, logStreamId))[2], 3);
});

test('the same key with another body, or a malformed key, is refused with 422 naming the key', async (t) => {
  const { store, projectId, logStreamId } = await openStore(t);
  await store.logTraces(projectId, body(logStreamId), { idempotencyKey: 'k' });
  const changed = body(logStreamId);
  changed.traces[0]!.input = 'what is 3+3?';
  await assert.rejects(
    store.logTraces(projectId, changed, { idempotencyKey: 'k' }),
    (err: unknown) =>
      err instanceof InvalidRequestError && err.statusCode === 422 && err.issues[0]!.loc.join('.') === 'options.idempotencyKey',
  );
  for (const bad of ['', ' lead', 'x'.repeat(256), 'tab\there', 'é']) {
    await assert.rejects(
      store.logTraces(projectId, body(logStreamId), { idempotencyKey: bad }),
      (err: unknown) => err instanceof InvalidRequestError && err.issues[0]!.loc.join('.') === 'options.idempotencyKey',
      JSON.stringify(bad),
    );
  }
  assert.deepEqual(await counts(store, projectId, logStreamId), [1, 1, 1]);
});

test('after a restart, a retry with the key finds the records its first attempt logged and logs nothing', async (t) => {
  const dir = tempDir(t);
  let projectId: string;
  let logStreamId: string;
  let first: Awaited<ReturnType<TraceStore['logTraces']>>;
  let firstSpans: unknown[];
  {
    const store = await TraceStore.open(dir);
    projectId = store.createProject({ name: 'p' }).id;
    logStreamId = store.createLogStream(projectId, 's').id;
    first = await store.logTraces(projectId, body(logStreamId), { idempotencyKey: 'order-17' });
    firstSpans = (await store.search('span', projectId, { log_stream_id: logStreamId })).records;
    await store.close();
  }
  const store = await TraceStore.open(dir);
  t.after(() => store.close());
  const again = await store.logTraces(projectId, body(logStreamId), { idempotencyKey: 'order-17' });
  assert.deepEqual(again, first);
  assert.deepEqual(await counts(store, projectId, logStreamId), [1, 1, 1]);
  // Not logged again: the stored span is the first attempt's version (same updated_at and created_at).
  assert.deepEqual((await store.search('span', projectId, { log_stream_id: logStreamId })).records, firstSpans);
});

test('a failed first attempt is forgotten (its retry runs); keys are forgotten after the window', async () => {
  let now = 0;
  const keys = new IdempotencyKeys(() => now);
  let runs = 0;
  await assert.rejects(
    keys.run('s', 'k', {}, ['k'], async () => {
      runs++;
      throw new Error('disk full');
    }),
  );
  assert.equal(await keys.run('s', 'k', {}, ['k'], async () => ++runs), 2);
  assert.equal(await keys.run('s', 'k', {}, ['k'], async () => ++runs), 2);
  now += IDEMPOTENCY_WINDOW_MS;
  assert.equal(await keys.run('s', 'k', {}, ['k'], async () => ++runs), 3);
  assert.equal(keys.size, 1);
});
