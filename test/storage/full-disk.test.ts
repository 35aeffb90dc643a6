// Guarantees (Log spans' `reliable` flag): on a full disk a `reliable: true` request fails with an
// error (5xx: a storage failure, whose body names no file, path or system error) while a `reliable:
// false` one is still answered 200 (its failure is only logged); a catalog change that cannot be
// written fails and is not applied. Nothing is left half-written: once space returns, new requests
// succeed, and after reopening every acknowledged record and change is there and none of the refused
// ones.
//
// The full disk is a small tmpfs mounted in a mount namespace of its own: the test runs itself again
// in a child under `unshare -m` (as root) or `unshare -r -m` (as another user, in a user namespace),
// so it runs wherever either is permitted, and the mount goes with the child. It skips, saying why,
// only where neither is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TraceStore } from '../../src/engine/trace-store.js';
import { buildServer } from '../../src/server/build-server.js';
import { assertConsistent, counts, scan } from '../support/consistency.js';
import { entryExecArgv } from '../support/node-entry.js';
import { mountSmallDisk } from '../support/small-disk.js';
import { unshareAsRoot } from '../support/user-namespace.js';

const NAME = 'a full disk: reliable requests fail with a clean 5xx, unreliable ones are answered, nothing half-written';
const INSIDE = 'TRACELAKE_FULL_DISK_NAMESPACE';

if (process.env[INSIDE] !== '1') {
  test(NAME, { timeout: 180_000 }, (t) => {
    const ns = unshareAsRoot(['-m']);
    if ('why' in ns) {
      t.skip(ns.why);
      return;
    }
    // A test run of its own (without NODE_TEST_CONTEXT it does not report into this one).
    const { NODE_TEST_CONTEXT: _inner, ...env } = process.env;
    const self = fileURLToPath(import.meta.url);
    const run = spawnSync(
      ns.prefix[0]!,
      [...ns.prefix.slice(1), process.execPath, ...entryExecArgv(), '--enable-source-maps', '--test', '--test-reporter=spec', self],
      {
        env: { ...env, [INSIDE]: '1' },
        encoding: 'utf8',
        timeout: 170_000,
      },
    );
    const out = `${run.stdout}${run.stderr}`;
    t.diagnostic(
      out
        .split('\n')
        .filter((l) => l.startsWith('ℹ') || l.startsWith('#'))
        .join('\n'),
    );
    assert.equal(run.status, 0, out.slice(-6000));
    assert.match(out, /ℹ pass 1\n/, 'the full-disk test ran in the namespace');
    assert.match(out, /ℹ skipped 0\n/);
  });
} else {
  test(NAME, { timeout: 150_000 }, (t) => fullDisk(t));
}

async function fullDisk(t: import('node:test').TestContext): Promise<void> {
  const disk = mountSmallDisk(24 * 1024 * 1024);
  if ('skip' in disk) assert.fail(`inside its own mount namespace the tmpfs could not be mounted: ${disk.skip}`);
  t.after(() => disk.unmount());
  const dir = join(disk.dir, 'data');
  const store = await TraceStore.open(dir, { sealRows: 1_000_000 });
  let storeOpen = true;
  t.after(async () => {
    if (storeOpen) await store.close().catch(() => undefined);
  });
  const admin = store.users.create({ email: 'disk@test', role: 'admin' });
  const key = store.users.createApiKey(admin.id).key;
  const project = store.createProject({ name: 'disk' });
  const stream = store.createLogStream(project.id, 'default');
  const app = buildServer({ store });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  let listening = true;
  t.after(async () => {
    if (listening) await app.close();
  });
  const call = async (method: string, path: string, body: unknown) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { 'Galileo-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: r.status, body: (await r.json()) as any };
  };
  let n = 0;
  const traces = (tag: string, count: number, bytes = 3000) =>
    Array.from({ length: count }, () => {
      n++;
      return {
        id: crypto.randomUUID(),
        name: `${tag}-${n}`,
        tags: [tag],
        input: 'q'.repeat(bytes),
        spans: [
          { type: 'tool', name: 't', input: 'x'.repeat(bytes) },
          { type: 'llm', name: 'l', input: [{ role: 'user', content: 'y'.repeat(bytes) }] },
        ],
      };
    });
  const log = (tag: string, reliable: boolean, count = 3) => {
    const body = traces(tag, count);
    return call('POST', `/v2/projects/${project.id}/traces`, { log_stream_id: stream.id, reliable, traces: body }).then((r) => ({
      ...r,
      ids: body.map((x) => x.id),
    }));
  };
  const acked: string[] = [];
  const refused: string[] = [];
  const before = await log('before', true, 5);
  assert.equal(before.status, 200);
  acked.push(...before.ids);

  const clean = (what: string, r: { status: number; body: any }) => {
    assert.ok(
      r.status >= 500 && r.status < 600,
      `${what}: a storage failure answers 5xx (got ${r.status} ${JSON.stringify(r.body).slice(0, 200)})`,
    );
    assert.equal(typeof r.body.detail, 'string', `${what}: a {detail} body`);
    const text = JSON.stringify(r.body);
    for (const secret of [disk.dir, 'ENOSPC', 'no space', 'wal-', '.ndjson', 'errno', 'syscall'])
      assert.ok(!text.toLowerCase().includes(secret.toLowerCase()), `${what}: the body leaks "${secret}": ${text}`);
  };

  // The disk fills up, leaving less room than one request: writes are cut short mid-way.
  disk.fill(6000);
  for (let i = 0; i < 3; i++) {
    const r = await log('refused', true);
    clean(`reliable log ${i}`, r);
    refused.push(...r.ids);
  }
  const unreliable = await log('unreliable', false);
  assert.equal(unreliable.status, 200, 'reliable: false is answered 200 on a full disk');
  const created = await call('POST', '/v2/projects', { name: 'not-while-full', description: 'd'.repeat(20_000) });
  clean('create project', created);
  assert.ok(!store.findProjects().some((p) => p.name === 'not-while-full'), 'a catalog change that was not written is not applied');
  await assert.rejects(store.flush(), 'sealing fails on a full disk');
  disk.fill(0); // not a byte left
  // (A change smaller than what is left of the catalog log's last page still fits: this one does not.)
  const changed = await call('PATCH', `/v2/projects/${project.id}`, { name: 'renamed-while-full', description: 'r'.repeat(20_000) });
  clean('change project', changed);
  assert.equal(store.catalog.getProject(project.id).name, 'disk', 'the refused change is not applied');

  // Space returns: everything works again.
  disk.free();
  const after = await log('after', true, 5);
  assert.equal(after.status, 200, JSON.stringify(after.body));
  acked.push(...after.ids);
  const later = await call('POST', '/v2/projects', { name: 'after-full', description: 'fine' });
  assert.equal(later.status, 200);
  const present = async (s: TraceStore) =>
    new Set((await scan(s, 'trace', project.id, { log_stream_id: stream.id })).map((r) => String(r['id'])));
  const check = async (s: TraceStore, when: string) => {
    const ids = await present(s);
    for (const id of acked) assert.ok(ids.has(id), `${when}: acknowledged trace ${id} is there`);
    for (const id of refused) assert.ok(!ids.has(id), `${when}: refused trace ${id} is not there`);
    const c = await counts(s, project.id, { log_stream_id: stream.id });
    assert.equal(c.span, c.trace * 2, `${when}: every stored trace has both its spans`);
    assert.ok(
      s.findProjects().some((p) => p.name === 'after-full'),
      `${when}: the project created after the disk emptied`,
    );
    assert.ok(!s.findProjects().some((p) => p.name === 'not-while-full'), `${when}: the refused project`);
    assert.equal(s.catalog.getProject(project.id).name, 'disk', `${when}: the refused change`);
    await assertConsistent(s, project.id, when);
  };
  await check(store, 'live');
  await store.flush();
  await check(store, 'sealed');
  await app.close();
  listening = false;
  await store.close();
  storeOpen = false;
  const again = await TraceStore.open(dir);
  try {
    await check(again, 'reopened');
    const logged = await again.logTraces(project.id, { log_stream_id: stream.id, traces: traces('reopened', 1) as never });
    assert.equal(logged.traces_count, 1);
  } finally {
    await again.close();
  }
  assert.ok(!existsSync(join(dir, 'wal', 'rejected.ndjson')), 'no logged request was refused on reload (a torn write in the log)');
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('.tmp-')),
    [],
    'no temporary files left behind',
  );
}
