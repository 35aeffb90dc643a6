// Guarantees: a store opened with readOnly: true reads a folder that another process holds and writes
// (never taking its lock, never changing a file but its lease), over a consistent snapshot: the
// writer's manifest plus its acknowledged, unsealed log; refresh() moves it on, refreshBeforeRead does
// so before every read; several readers each keep their own view; writes fail with STORE_READ_ONLY; a
// merge that removes the segments a reader's snapshot names is survived (the writer keeps them for a
// leased reader; a reader without a lease runs the read again on a newer snapshot); a writer killed
// mid-way leaves readers answering, and a reader opened after the restart sees what the writer recovered;
// a folder whose files are all read-only is read by a user who may not write it.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/binary/config.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { ReadOnlyError } from '../../src/errors.js';
import { loadManifest } from '../../src/storage/manifest/manifest.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';
import { startWriter } from '../support/read-only-writer-client.js';
import { waitFor } from '../support/wait-for.js';

/** Every file under `dir` (but the readers' leases) with its size and modification time. */
function listing(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) {
        out.push(`${relative(dir, p)}/`);
        if (relative(dir, p) !== 'readers') walk(p);
      } else {
        const st = statSync(p);
        out.push(`${relative(dir, p)} ${st.size} ${st.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return out.sort();
}

const traceCount = async (store: TraceStore, projectId: string, logStreamId: string) =>
  (await store.count('trace', projectId, { log_stream_id: logStreamId })).total_count;

test('beside a live writer: the acknowledged log is read without the lock, refresh moves on, each reader keeps its view, writes are refused', async (t) => {
  const dir = join(tempDir(t), 'data');
  const writer = await startWriter(t, dir);
  const { projectId, logStreamId } = (await writer.send({ op: 'setup' })) as { projectId: string; logStreamId: string };
  await writer.send({ op: 'log', n: 3, tag: 'a' });
  // The writer holds the folder: a plain open is refused, a read-only one is not.
  await assert.rejects(TraceStore.open(dir, { threads: 1 }), (err: unknown) => (err as { code?: string }).code === 'STORE_LOCKED');
  const before = listing(dir);
  const first = await TraceStore.open(dir, { readOnly: true, threads: 1 });
  t.after(() => first.close());
  assert.equal(first.readOnly, true);
  // Nothing sealed yet: all three come from the writer's log.
  assert.equal(loadManifest(dir).segments.length, 0);
  assert.equal(await traceCount(first, projectId, logStreamId), 3);
  assert.deepEqual(
    first.catalog.listProjects().projects.map((p) => p.name),
    ['live'],
  );
  assert.deepEqual(await first.data.sql('SELECT count(*)::INTEGER AS n FROM spans WHERE type = $1', ['llm']), [{ n: 3 }]);
  const arrow = await first.data.sql('SELECT name FROM traces ORDER BY name', [], { format: 'arrow' });
  assert.deepEqual(arrow.getChild('name')!.toArray().map(String), ['a-0', 'a-1', 'a-2']);
  const out = join(tempDir(t), 'export.jsonl');
  // Sessions, traces and spans: three records a trace.
  assert.deepEqual(await first.data.exportFile(projectId, out, { format: 'jsonl', log_stream_id: logStreamId }), { rows: 9 });
  // The reader changed nothing in the folder (its scratch files live outside it).
  assert.deepEqual(listing(dir), before);

  await writer.send({ op: 'log', n: 2, tag: 'b' });
  const second = await TraceStore.open(dir, { readOnly: true, threads: 1 });
  t.after(() => second.close());
  const live = await TraceStore.open(dir, { readOnly: true, threads: 1, refreshBeforeRead: true });
  t.after(() => live.close());
  await writer.send({ op: 'flush' });
  await writer.send({ op: 'log', n: 1, tag: 'c' });
  // Each reader keeps the state it last read until it refreshes; one refreshing before each read is current.
  assert.equal(await traceCount(first, projectId, logStreamId), 3);
  assert.equal(await traceCount(second, projectId, logStreamId), 5);
  assert.equal(await traceCount(live, projectId, logStreamId), 6);
  await first.refresh();
  assert.equal(await traceCount(first, projectId, logStreamId), 6);
  assert.ok(loadManifest(dir).segments.length > 0, 'the flush sealed segments, read beside the log');
  // No record twice: the sealed rows and the log's rows are one set of ids.
  const ids = (await first.data.sql('SELECT id FROM traces')).map((r) => r['id']);
  assert.equal(new Set(ids).size, 6);

  const a = (await first.search('trace', projectId, { log_stream_id: logStreamId, limit: 100 })).records.find((r) => r['name'] === 'a-0')!;
  await writer.send({ op: 'delete', ids: [a['id']] });
  await first.refresh();
  assert.equal(await traceCount(first, projectId, logStreamId), 5, 'a delete acknowledged before the refresh is seen');
  assert.deepEqual(await first.data.sql('SELECT count(*)::INTEGER AS n FROM traces WHERE id = $1', [a['id'] as string]), [{ n: 0 }]);

  // A delete of a trace's only span leaves the trace childless: the mark is seen after a refresh too.
  const c = (await first.search('trace', projectId, { log_stream_id: logStreamId, limit: 100 })).records.find((r) => r['name'] === 'c-0')!;
  assert.equal(c['has_children'], true);
  const spanOfC = await first.data.sql('SELECT id FROM spans WHERE trace_id = $1', [c['id'] as string]);
  assert.equal(spanOfC.length, 1);
  await writer.send({ op: 'deleteSpans', ids: [spanOfC[0]!['id']] });
  await first.refresh();
  const cAfter = (await first.search('trace', projectId, { log_stream_id: logStreamId, limit: 100 })).records.find(
    (r) => r['name'] === 'c-0',
  )!;
  assert.equal(cAfter['has_children'], false, "the writer's childless mark, from its log");
  assert.deepEqual(await first.data.sql('SELECT count(*)::INTEGER AS n FROM spans WHERE trace_id = $1', [c['id'] as string]), [{ n: 0 }]);

  // Writes are refused, and say why.
  const refused = (err: unknown) => err instanceof ReadOnlyError && err.code === 'STORE_READ_ONLY' && /read-only/.test(err.message);
  await assert.rejects(first.logTraces(projectId, { log_stream_id: logStreamId, traces: [{ name: 'x' }] }), refused);
  await assert.rejects(first.records.delete('trace', projectId, { log_stream_id: logStreamId }), refused);
  await assert.rejects(first.maintenance.compact(), refused);
  assert.throws(() => first.createProject({ name: 'other' }), refused);
  await assert.rejects(first.flush(), refused);
  // Scoring writes records and defining a scorer writes the catalog; prices are a catalog write too.
  assert.throws(() => first.scorers.score({ projectId, runId: logStreamId, scorers: ['bleu'] }), refused);
  assert.throws(() => first.scorers.define({ name: 'ro_check', score: () => 1 }), refused);
  assert.throws(() => first.data.setModelPrices(projectId, { models: {} }), refused);
  // Reads added beside scoring and charts answer from the snapshot.
  const agg = await first.records.aggregate('trace', projectId, { log_stream_id: logStreamId, measures: [{ op: 'count', alias: 'n' }] });
  assert.deepEqual(agg.rows, [{ n: 5 }]);
});

test('a merge removes the segments a reader reads: kept for a leased reader until it lets go; without a lease the read runs again', async (t) => {
  const dir = join(tempDir(t), 'data');
  const writer = await startWriter(t, dir, 60_000);
  const { projectId, logStreamId } = (await writer.send({ op: 'setup' })) as { projectId: string; logStreamId: string };
  for (let i = 0; i < 4; i++) {
    await writer.send({ op: 'log', n: 5, tag: `s${i}` });
    await writer.send({ op: 'flush' });
  }
  const leased = await TraceStore.open(dir, { readOnly: true, threads: 1, leaseMs: 3_000 });
  // Readers without a lease: the first read of each after the merge is a count, an SQL query, a search.
  const unleased = await Promise.all([0, 1, 2].map(() => TraceStore.open(dir, { readOnly: true, threads: 1, lease: false })));
  t.after(() => Promise.all(unleased.map((u) => u.close())));
  assert.equal(readdirSync(join(dir, 'readers')).length, 1, 'one lease: the leased reader');
  const old = loadManifest(dir).segments.map((s) => s.file);
  assert.ok(((await writer.send({ op: 'compact' }))['merges']! as number) > 0);
  const now = loadManifest(dir).segments.map((s) => s.file);
  const retired = old.filter((f) => !now.includes(f));
  assert.ok(retired.length > 0, 'the merge replaced segments');
  const onDisk = () => retired.filter((f) => existsSync(join(dir, f)));
  // The writer keeps what the leased reader's snapshot names; both readers answer from their own snapshot.
  assert.deepEqual(onDisk(), retired);
  assert.equal(await traceCount(leased, projectId, logStreamId), 20);
  await leased.close();
  assert.equal(readdirSync(join(dir, 'readers')).length, 0, 'the lease goes with its reader');
  await waitFor(() => onDisk().length === 0, { what: 'the retired segments to go once no lease needs them' });
  // The unleased reader's snapshot now names files that are gone: its reads run again on a newer one.
  assert.equal(await traceCount(unleased[0]!, projectId, logStreamId), 20);
  assert.deepEqual(await unleased[1]!.data.sql('SELECT count(*)::INTEGER AS n FROM traces'), [{ n: 20 }]);
  assert.equal((await unleased[2]!.search('span', projectId, { log_stream_id: logStreamId, limit: 100 })).records.length, 20);
});

test('a writer killed mid-way leaves readers answering; a reader opened after its restart sees what it recovered', async (t) => {
  const dir = join(tempDir(t), 'data');
  const writer = await startWriter(t, dir);
  const { projectId, logStreamId } = (await writer.send({ op: 'setup' })) as { projectId: string; logStreamId: string };
  await writer.send({ op: 'log', n: 4, tag: 'a' });
  await writer.send({ op: 'flush' });
  await writer.send({ op: 'log', n: 3, tag: 'b' });
  const reader = await TraceStore.open(dir, { readOnly: true, threads: 1 });
  t.after(() => reader.close());
  await writer.kill();
  assert.equal(await traceCount(reader, projectId, logStreamId), 7);
  await reader.refresh();
  assert.equal(await traceCount(reader, projectId, logStreamId), 7);
  const restarted = await TraceStore.open(dir, { threads: 1 });
  try {
    const recovered = (await restarted.data.sql('SELECT id FROM traces ORDER BY id')).map((r) => r['id']);
    assert.equal(recovered.length, 7);
    const after = await TraceStore.open(dir, { readOnly: true, threads: 1 });
    t.after(() => after.close());
    assert.deepEqual(
      (await after.data.sql('SELECT id FROM traces ORDER BY id')).map((r) => r['id']),
      recovered,
    );
    await reader.refresh();
    assert.equal(await traceCount(reader, projectId, logStreamId), 7);
  } finally {
    await restarted.close();
  }
});

test('a folder whose files are all read-only is read by a user who may not write it (the writer killed, its log unsealed)', async (t) => {
  const base = tempDir(t);
  const dir = join(base, 'data');
  const writer = await startWriter(t, dir);
  const { projectId, logStreamId } = (await writer.send({ op: 'setup' })) as { projectId: string; logStreamId: string };
  await writer.send({ op: 'log', n: 2, tag: 'sealed' });
  await writer.send({ op: 'flush' });
  await writer.send({ op: 'log', n: 3, tag: 'logged' });
  await writer.kill();
  // Everything read-only, for everyone; the folders on the way there may be entered.
  const lock = (p: string, mode: number) => {
    if (statSync(p).isDirectory()) for (const e of readdirSync(p)) lock(join(p, e), mode);
    chmodSync(p, statSync(p).isDirectory() ? mode | 0o111 : mode);
  };
  lock(dir, 0o444);
  chmodSync(base, 0o755);
  t.after(() => lock(dir, 0o644 | 0o200));
  const before = listing(dir);
  const args = [...nodeEntry(join(ROOT, 'test', 'support', 'read-only-reader.ts')), dir, projectId, logStreamId];
  // Root ignores file modes: the reader runs as an ordinary user.
  const asRoot = process.getuid?.() === 0;
  const res = asRoot
    ? spawnSync('runuser', ['-u', 'cloudsdk', '--', process.execPath, ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, HOME: '/tmp' },
      })
    : spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  assert.equal(res.status, 0, res.stderr);
  const seen = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  assert.deepEqual(seen, {
    traces: 5,
    spans: 5,
    names: ['logged-0', 'logged-1', 'logged-2', 'sealed-0', 'sealed-1'],
    sql: 5,
    arrowRows: 5,
    exported: 15,
    projects: ['live'],
    writeError: 'STORE_READ_ONLY',
  });
  assert.deepEqual(listing(dir), before, 'nothing in the folder changed');
});

test('a writer logging, sealing and merging is killed at random moments while a reader reads: no read fails; new readers see what it recovered', {
  timeout: 300_000,
}, async (t) => {
  const dir = join(tempDir(t), 'data');
  let projectId: string;
  let logStreamId: string;
  {
    const store = await TraceStore.open(dir, { threads: 1 });
    projectId = store.createProject({ name: 'crash' }).id;
    logStreamId = store.createLogStream(projectId, 'main').id;
    await store.close();
  }
  const reader = await TraceStore.open(dir, { readOnly: true, threads: 1 });
  t.after(() => reader.close());
  const acked = new Set<string>();
  for (let round = 0; round < 3; round++) {
    const child = spawn(process.execPath, [...nodeEntry('test/support/crash-writer.ts'), dir, projectId, logStreamId, String(round)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const m = /^ack (\S+) /.exec(buf.slice(0, nl));
        if (m) acked.add(m[1]!);
        buf = buf.slice(nl + 1);
      }
    });
    const killAt = Date.now() + 1_500 + Math.random() * 2_500;
    let reads = 0;
    // Reads before, while and after the writer dies (killed part way through whatever it was doing).
    while (Date.now() < killAt + 1_000 || reads < 3) {
      if (Date.now() >= killAt && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      const mustSee = [...acked];
      await reader.refresh();
      const ids = (await reader.data.sql('SELECT id FROM traces')).map((r) => r['id'] as string);
      const seen = new Set(ids);
      assert.equal(seen.size, ids.length, 'no trace twice');
      for (const id of mustSee) assert.ok(seen.has(id), `acknowledged ${id} seen`);
      assert.equal(await traceCount(reader, projectId, logStreamId), ids.length);
      reads++;
    }
    await exited;
    // The writer's restart recovers; a reader opened after it sees exactly that.
    const restarted = await TraceStore.open(dir, { threads: 1 });
    const recovered = (await restarted.data.sql('SELECT id FROM traces ORDER BY id')).map((r) => r['id'] as string);
    for (const id of acked) assert.ok(recovered.includes(id), `acknowledged ${id} recovered`);
    const after = await TraceStore.open(dir, { readOnly: true, threads: 1 });
    assert.deepEqual(
      (await after.data.sql('SELECT id FROM traces ORDER BY id')).map((r) => r['id']),
      recovered,
    );
    await after.close();
    await restarted.close();
    await reader.refresh();
    assert.deepEqual(
      (await reader.data.sql('SELECT id FROM traces ORDER BY id')).map((r) => r['id']),
      recovered,
    );
  }
});
