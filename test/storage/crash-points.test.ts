// Guarantees: a writer killed at an exact point of the write path loses nothing acknowledged, keeps
// nothing torn, duplicates nothing, and reopens for writing: in the middle of writing a request's
// Arrow batch to the log, after a seal or merge wrote its Parquet file but before the manifest names
// it, and after the manifest was renamed into place but before the store acted on it. The random
// kills of crash.test.ts and crash-seal.test.ts land on such points only by chance.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

type Point = 'wal-half' | 'segment-written' | 'manifest-renamed';

/** Runs the writer until it stops at the n-th `point`, kills it, and returns the acknowledged traces. */
function stopAndKill(dir: string, projectId: string, runId: string, point: Point, nth: number): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeEntry('test/support/stop-writer.ts'), dir, projectId, runId, point, String(nth)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acked = new Map<string, number>();
    let buf = '';
    let err = '';
    let stopped = false;
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const m = /^ack (\S+) (\d+)$/.exec(line);
        if (m) acked.set(m[1]!, Number(m[2]));
        if (line === 'stopped') {
          stopped = true;
          child.kill('SIGKILL');
        }
      }
    });
    child.on('exit', (code, signal) =>
      stopped && signal === 'SIGKILL'
        ? resolve(acked)
        : reject(new Error(`writer ended (${code ?? signal}) before reaching ${point}: ${err}`)),
    );
  });
}

function unlistedSegments(dir: string): string[] {
  const manifest = join(dir, 'manifest.json');
  const listed = new Set(
    existsSync(manifest)
      ? (JSON.parse(readFileSync(manifest, 'utf8')) as { segments: { file: string }[] }).segments.map((s) => s.file)
      : [],
  );
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.parquet') && !listed.has(relative(dir, p))) out.push(p);
    }
  };
  if (existsSync(join(dir, 'records'))) walk(join(dir, 'records'));
  return out;
}

for (const [point, nths] of [
  ['wal-half', [3, 40]],
  ['segment-written', [1, 6]],
  ['manifest-renamed', [1, 6]],
] as const) {
  test(`SIGKILL at ${point} keeps every acknowledged span once and nothing torn`, { timeout: 300_000 }, async (t) => {
    const dir = tempDir(t);
    let projectId: string;
    let runId: string;
    {
      const store = await TraceStore.open(dir);
      projectId = store.createProject({ name: 'crash-points' }).id;
      runId = store.createLogStream(projectId, 'default').id;
      await store.close();
    }
    const all = new Map<string, number>();
    for (const nth of nths) {
      const acked = await stopAndKill(dir, projectId, runId, point, nth);
      assert.ok(acked.size > 0 || nth < 5, `${point} #${nth}: the writer acknowledged something first`);
      for (const [k, v] of acked) all.set(k, v);
      const store = await TraceStore.open(dir);
      try {
        // Reopening cleans up: a segment the manifest does not name is removed.
        assert.deepEqual(unlistedSegments(dir), [], `${point} #${nth}: unlisted segments after reopening`);
        const perTrace = new Map<string, number>();
        const ids = new Set<string>();
        for (let token: number | null = 0; token !== null; ) {
          const page = await store.search('span', projectId, { log_stream_id: runId, starting_token: token, limit: 1000 });
          for (const r of page.records) {
            assert.ok(!ids.has(String(r['id'])), `${point} #${nth}: span ${String(r['id'])} appears twice`);
            ids.add(String(r['id']));
            perTrace.set(String(r['trace_id']), (perTrace.get(String(r['trace_id'])) ?? 0) + 1);
          }
          token = page.next_starting_token;
        }
        for (const [traceId, n] of all)
          assert.equal(perTrace.get(traceId), n, `${point} #${nth}: acknowledged trace ${traceId} has all ${n} spans`);
        // Every stored trace is one whole request: the writer names them t<i> and sends exactly
        // 10 + (i % 31) spans with each (the test's own writes are named 'after', with one span).
        const names = new Map<string, string>();
        for (let token: number | null = 0; token !== null; ) {
          const page = await store.search('trace', projectId, { log_stream_id: runId, starting_token: token, limit: 1000 });
          for (const r of page.records) names.set(String(r['id']), String(r['name']));
          token = page.next_starting_token;
        }
        for (const [traceId, name] of names) {
          const m = /^t(\d+)$/.exec(name);
          assert.ok(m || name === 'after', `${point} #${nth}: trace ${traceId} is named ${name}`);
          assert.equal(
            perTrace.get(traceId) ?? 0,
            m ? 10 + (Number(m[1]) % 31) : 1,
            `${point} #${nth}: trace ${name} holds exactly the spans of its request`,
          );
        }
        for (const traceId of perTrace.keys())
          assert.ok(names.has(traceId), `${point} #${nth}: spans of trace ${traceId}, which is not stored`);
        const unacked = [...names.keys()].filter((id) => !all.has(id));
        // One request was in flight at each stop (the writer waits for each acknowledgement): a batch
        // cut in half is gone; at a seal's step the request may have reached the log, but whole.
        if (point === 'wal-half') assert.equal(unacked.length, 0, `${point} #${nth}: the half-written request was replayed`);
        assert.ok(unacked.length <= 1, `${point} #${nth}: ${unacked.length} unacknowledged traces, but one request at most was in flight`);
        for (const id of unacked) all.set(id, perTrace.get(id)!);
        assert.equal((await store.count('span', projectId, { log_stream_id: runId })).total_count, ids.size);
        // The store takes writes again.
        const res = await store.logTraces(projectId, {
          log_stream_id: runId,
          reliable: true,
          traces: [{ name: 'after', input: 'a', spans: [{ type: 'llm', name: 'l', input: 'b' }] }],
        });
        all.set(res.trace_ids[0]!, 1);
      } finally {
        await store.close();
      }
    }
  });
}
