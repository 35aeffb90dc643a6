// Guarantees: a writer killed with SIGKILL while seals and merges run (tiny memory tables), and a log
// whose last request was cut in the middle of its Arrow batch (what a kill during a large write or a
// power cut leaves), lose nothing acknowledged, keep nothing torn, duplicate nothing, and reopen.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import { BatchBuilder } from '../../src/storage/memtable/batch-builder.js';
import { encodeEntry, listWalFiles } from '../../src/storage/wal/wal.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const ROUNDS = Number(process.env['TRACELAKE_CRASH_ROUNDS'] ?? 4);

function runAndKill(dir: string, projectId: string, logStreamId: string, round: number, afterMs: number): Promise<Map<string, number>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeEntry('test/support/seal-writer.ts'), dir, projectId, logStreamId, String(round)], {
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
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(acked) : reject(new Error(`writer exited with ${code}: ${err}`))));
  });
}

/** Segment files on disk the manifest does not name: a seal or merge was writing when the kill came. */
function unlistedSegments(dir: string): number {
  const manifest = join(dir, 'manifest.json');
  const listed = new Set(
    existsSync(manifest)
      ? (JSON.parse(readFileSync(manifest, 'utf8')) as { segments: { file: string }[] }).segments.map((s) => s.file)
      : [],
  );
  let n = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.parquet') && !listed.has(relative(dir, p))) n++;
    }
  };
  if (existsSync(join(dir, 'records'))) walk(join(dir, 'records'));
  return n;
}

test('SIGKILL during seals and merges, and a batch torn in the log, lose nothing acknowledged', { timeout: 240_000 }, async (t) => {
  const dir = tempDir(t);
  let projectId: string;
  let logStreamId: string;
  {
    const store = await TraceStore.open(dir);
    const p = store.createProject({ name: 'crash-seal' });
    projectId = p.id;
    logStreamId = store.createLogStream(p.id, 'default').id;
    await store.close();
  }
  const all = new Map<string, number>();
  let seed = 4242;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  let midSeal = 0;
  let torn = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const acked = await runAndKill(dir, projectId, logStreamId, round, 400 + Math.floor(rand() * 1200));
    for (const [k, v] of acked) all.set(k, v);
    if (unlistedSegments(dir) > 0 || listWalFiles(join(dir, 'wal')).length > 1) midSeal++;
    if (round % 2 === 1) {
      // A request cut in the middle of its batch: a prefix of a whole encoded entry at the end of the log.
      const files = listWalFiles(join(dir, 'wal'));
      const last = files[files.length - 1];
      if (last) {
        const id = '0badbad0-0000-4000-8000-000000000000';
        const row = {
          seq: 999_999_999,
          id,
          type: 'tool',
          project_id: projectId,
          run_id: logStreamId,
          trace_id: id,
          name: 'torn',
          input: 'z'.repeat(500),
          created_at: 1,
          updated_at: 1,
          is_complete: true,
          has_children: false,
        };
        const bytes = encodeEntry(new BatchBuilder().build([row]), [], 999_999_999);
        appendFileSync(last.path, bytes.subarray(0, 8 + Math.floor(rand() * (bytes.length - 16))));
        torn++;
      }
    }
    const store = await TraceStore.open(dir);
    try {
      const ids = new Set<string>();
      const perTrace = new Map<string, number>();
      for (let token: number | null = 0; token !== null; ) {
        const page = await store.search('span', projectId, { log_stream_id: logStreamId, starting_token: token, limit: 1000 });
        for (const r of page.records) {
          assert.ok(!ids.has(String(r['id'])), `round ${round}: span ${String(r['id'])} appears twice`);
          ids.add(String(r['id']));
          assert.notEqual(r['name'], 'torn', `round ${round}: a torn request was replayed`);
          perTrace.set(String(r['trace_id']), (perTrace.get(String(r['trace_id'])) ?? 0) + 1);
        }
        token = page.next_starting_token;
      }
      for (const [traceId, n] of all)
        assert.equal(perTrace.get(traceId), n, `round ${round}: acknowledged trace ${traceId} has all its spans`);
      // Unacknowledged traces (in flight at the kill) are whole or absent.
      for (const [traceId, n] of perTrace)
        if (!all.has(traceId)) assert.ok(n >= 10 && n <= 40, `round ${round}: trace ${traceId} has ${n} spans`);
      assert.equal((await store.count('span', projectId, { log_stream_id: logStreamId })).total_count, ids.size);
    } finally {
      await store.close();
    }
  }
  t.diagnostic(
    `${ROUNDS} kills: ${midSeal} with a seal or merge in progress (unsealed log files or unlisted segments), ${torn} with a torn batch appended`,
  );
  assert.ok(midSeal >= 1, 'at least one kill came during a seal or merge');
});
