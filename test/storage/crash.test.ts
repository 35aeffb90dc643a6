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
  let seed = 12345;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < ROUNDS; round++) {
    const acked = await runAndKill(dir, projectId, logStreamId, round, 300 + Math.floor(rand() * 900));
    for (const [k, v] of acked) all.set(k, v);
    const store = await TraceStore.open(dir);
    try {
      const total = (await store.count('span', projectId, { log_stream_id: logStreamId })).total_count;
      const traces = (await store.count('trace', projectId, { log_stream_id: logStreamId })).total_count;
      let ackedSpans = 0;
      for (const v of all.values()) ackedSpans += v;
      // Unacknowledged traces (in flight at the kill) may be there too, but wholly or not at all.
      assert.ok(traces >= all.size, `round ${round}: ${traces} traces stored, ${all.size} acknowledged`);
      assert.ok(total >= ackedSpans, `round ${round}: ${total} spans stored, ${ackedSpans} acknowledged`);
      const ids = new Set<string>();
      let token: number | null = 0;
      const perTrace = new Map<string, number>();
      while (token !== null) {
        const page = await store.search('span', projectId, { log_stream_id: logStreamId, starting_token: token, limit: 1000 });
        for (const r of page.records) {
          assert.ok(!ids.has(String(r['id'])), 'no duplicate span ids');
          ids.add(String(r['id']));
          perTrace.set(String(r['trace_id']), (perTrace.get(String(r['trace_id'])) ?? 0) + 1);
        }
        token = page.next_starting_token;
      }
      for (const [traceId, n] of all) assert.equal(perTrace.get(traceId), n, `round ${round}: trace ${traceId} has all its spans`);
      // Every stored trace is whole: 1 to 5 spans, as the writer sends them.
      for (const n of perTrace.values()) assert.ok(n >= 1 && n <= 5);
    } finally {
      await store.close();
    }
  }
  assert.ok(all.size > ROUNDS * 5, `the writer made progress (${all.size} traces acknowledged)`);
});
