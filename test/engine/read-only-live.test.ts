// Guarantees: beside `tracelake serve` in another process, while 4 clients log 10,000 spans with
// reliable: true and delete some traces, and the server seals and merges, two read-only stores read
// without a failure; after each refresh every trace acknowledged before it is visible, no trace
// appears twice, and no trace whose delete was acknowledged before it is there.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TraceStore } from '../../src/engine/trace-store.js';
import { loadManifest } from '../../src/storage/manifest/manifest.js';
import { jsonCaller, tempDir } from '../support/helpers.js';
import { serveChild } from '../support/serve-child.js';

const CLIENTS = 4;
const PHASES = 5;
/** Requests per client and phase; each logs 10 traces of 2 spans: 4 * 5 * 25 * 10 * 2 = 10,000 spans. */
const REQUESTS = 25;
const TRACES = 10;

test('readers beside a live server: every acknowledged trace after a refresh, none twice, none deleted, no failed read', {
  timeout: 600_000,
}, async (t) => {
  const dir = join(tempDir(t), 'data');
  const key = `tl_live_${Date.now()}`;
  // Small memory tables: the server seals every few requests, and merges in the pauses between phases.
  const { url } = await serveChild(t, dir, ['--no-ui'], { TRACELAKE_API_KEY: key, TRACELAKE_MEM_TABLE_BYTES: String(256 * 1024) });
  const call = jsonCaller(url, key);
  const project = (await call('POST', '/projects', { name: 'live' })).body as { id: string };
  const stream = (await call('POST', `/projects/${project.id}/log_streams`, { name: 'main' })).body as { id: string };

  const acked = new Set<string>();
  const deleted = new Set<string>();
  /** Deletes sent, acknowledged or not: such a trace may or may not be seen until its delete is acknowledged. */
  const deleting = new Set<string>();
  const logPhase = async (client: number, phase: number) => {
    for (let r = 0; r < REQUESTS; r++) {
      const res = await call('POST', `/projects/${project.id}/traces`, {
        log_stream_id: stream.id,
        reliable: true,
        traces: Array.from({ length: TRACES }, (_, i) => ({
          name: `c${client}-p${phase}-r${r}-${i}`,
          input: `question ${'x'.repeat(200)}`,
          spans: [{ type: 'workflow', name: 'wf', spans: [{ type: 'llm', name: 'chat', input: 'q', output: 'a'.repeat(100) }] }],
        })),
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      for (const id of res.body.trace_ids as string[]) acked.add(id);
      if (r % 8 === 7) {
        const victim = (res.body.trace_ids as string[])[0]!;
        deleting.add(victim);
        const del = await call('POST', `/projects/${project.id}/traces/delete`, {
          log_stream_id: stream.id,
          filters: [{ type: 'id', column_id: 'id', operator: 'eq', value: victim }],
        });
        assert.equal(del.status, 200, JSON.stringify(del.body));
        deleted.add(victim);
      }
    }
  };

  const reader = await TraceStore.open(dir, { readOnly: true, threads: 1 });
  t.after(() => reader.close());
  const live = await TraceStore.open(dir, { readOnly: true, threads: 1, refreshBeforeRead: true });
  t.after(() => live.close());
  let done = false;
  let checks = 0;
  const readLoop = async () => {
    while (!done) {
      const mustSee = [...acked].filter((id) => !deleting.has(id));
      const mustNotSee = [...deleted];
      await reader.refresh();
      const ids = (await reader.data.sql('SELECT id FROM traces')).map((r) => r['id'] as string);
      const seen = new Set(ids);
      assert.equal(seen.size, ids.length, 'no trace twice');
      for (const id of mustSee) assert.ok(seen.has(id), `acknowledged trace ${id} visible after the refresh`);
      for (const id of mustNotSee) assert.ok(!seen.has(id), `deleted trace ${id} gone after the refresh`);
      // The library's reads agree with SQL on the same snapshot.
      assert.equal((await reader.count('trace', project.id, { log_stream_id: stream.id })).total_count, ids.length);
      const spans = await reader.data.sql('SELECT count(*)::INTEGER AS n, count(DISTINCT id)::INTEGER AS d FROM spans');
      assert.equal(spans[0]!['n'], spans[0]!['d'], 'no span twice');
      // The other reader refreshes before each read on its own.
      const n = (await live.count('trace', project.id, { log_stream_id: stream.id })).total_count;
      assert.ok(n >= mustSee.length, 'a reader refreshing before each read sees at least what was acknowledged');
      checks++;
    }
  };
  const reading = readLoop();
  try {
    for (let phase = 0; phase < PHASES; phase++) {
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => logPhase(c, phase)));
      // A pause in appends lets the server's merges run.
      await sleep(1_500);
    }
  } finally {
    done = true;
  }
  await reading;
  assert.ok(checks >= 3, `the reader checked ${checks} times`);
  await reader.refresh();
  const total = CLIENTS * PHASES * REQUESTS * TRACES;
  assert.equal(acked.size, total);
  assert.equal((await reader.count('trace', project.id, { log_stream_id: stream.id })).total_count, total - deleted.size);
  assert.deepEqual(await reader.data.sql('SELECT count(*)::INTEGER AS n FROM spans'), [{ n: (total - deleted.size) * 2 }]);
  const m = loadManifest(dir);
  assert.ok(
    m.next_segment - 1 > m.segments.length,
    `segments were merged or rewritten (${m.next_segment - 1} written, ${m.segments.length} listed)`,
  );
});
