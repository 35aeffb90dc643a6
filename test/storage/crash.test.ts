// Guarantees: a writer killed with SIGKILL at random moments (mid-append, mid-seal) loses nothing it
// acknowledged with reliable: true, duplicates nothing, and the folder reopens cleanly every time.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const ROUNDS = Number(process.env['TRACELAKE_CRASH_ROUNDS'] ?? 6);

function runAndKill(dir: string, projectId: string, logStreamId: string, round: number, afterMs: number): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeEntry('test/support/crash-writer.ts'), dir, projectId, logStreamId, String(round)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acked = new Map<string, number>();
    let buf = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line === 'ready') setTimeout(() => child.kill('SIGKILL'), afterMs);
        const m = /^ack (\S+) (\d+)$/.exec(line);
        if (m) acked.set(m[1]!, Number(m[2]));
      }
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(acked);
      else reject(new Error(`writer exited with ${code}: ${err}`));
    });
  });
}

test('SIGKILL at random moments never loses an acknowledged span', { timeout: 180_000 }, async (t) => {
  const dir = tempDir(t);
  let projectId: string;
  let logStreamId: string;
  {
    const store = await TraceStore.open(dir);
    const p = store.createProject({ name: 'crash' });
    projectId = p.id;
    logStreamId = store.createLogStream(p.id, 'default').id;
    await store.close();
  }
  const all = new Map<string, number>();
  /** Stored traces the writer never acknowledged (each was in flight at a kill). */
  const unacked = new Set<string>();
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let round = 0; round < ROUNDS; round++) {
    const acked = await runAndKill(dir, projectId, logStreamId, round, 300 + Math.floor(rand() * 900));
    for (const [k, v] of acked) all.set(k, v);
    const store = await TraceStore.open(dir);
    try {
      const ids = new Set<string>();
      const perTrace = new Map<string, number>();
      for (let token: number | null = 0; token !== null; ) {
        const page = await store.search('span', projectId, { log_stream_id: logStreamId, starting_token: token, limit: 1000 });
        for (const r of page.records) {
          assert.ok(!ids.has(String(r['id'])), 'no duplicate span ids');
          ids.add(String(r['id']));
          perTrace.set(String(r['trace_id']), (perTrace.get(String(r['trace_id'])) ?? 0) + 1);
        }
        token = page.next_starting_token;
      }
      // Every stored trace is one whole request: its name says which (r<round>-t<i>) and so how many
      // spans the writer sent with it, exactly 1 + (i % 5). A request torn by the kill would differ.
      const traces = new Map<string, string>();
      for (let token: number | null = 0; token !== null; ) {
        const page = await store.search('trace', projectId, { log_stream_id: logStreamId, starting_token: token, limit: 1000 });
        for (const r of page.records) traces.set(String(r['id']), String(r['name']));
        token = page.next_starting_token;
      }
      for (const [traceId, name] of traces) {
        const m = /^r(\d+)-t(\d+)$/.exec(name);
        assert.ok(m, `round ${round}: trace ${traceId} is named ${name}, not as the writer names them`);
        assert.equal(
          perTrace.get(traceId) ?? 0,
          1 + (Number(m[2]) % 5),
          `round ${round}: trace ${name} holds exactly the spans of its request`,
        );
      }
      for (const traceId of perTrace.keys())
        assert.ok(traces.has(traceId), `round ${round}: spans of trace ${traceId}, which is not stored`);
      // Every acknowledged trace is there with all its spans.
      for (const [traceId, n] of all)
        assert.equal(perTrace.get(traceId), n, `round ${round}: acknowledged trace ${traceId} has all its spans`);
      // The writer waits for each acknowledgement before sending on: one request at most was in flight.
      const fresh = [...traces.keys()].filter((id) => !all.has(id) && !unacked.has(id));
      assert.ok(fresh.length <= 1, `round ${round}: ${fresh.length} unacknowledged traces stored, but one request at most was in flight`);
      for (const id of fresh) unacked.add(id);
      assert.equal(traces.size, all.size + unacked.size, `round ${round}: every stored trace is acknowledged or was in flight`);
      assert.equal(
        (await store.count('span', projectId, { log_stream_id: logStreamId })).total_count,
        ids.size,
        `round ${round}: the count agrees with the walk`,
      );
    } finally {
      await store.close();
    }
  }
  assert.ok(all.size > ROUNDS * 5, `the writer made progress (${all.size} traces acknowledged)`);
});
