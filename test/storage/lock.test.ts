// Guarantees of the folder lock beyond the race (lock-race.test.ts): a holder that dies by SIGKILL
// blocks nobody, not even a restart that gets the same pid (pid 1 in a container); a refused open
// names the holder; a second open inside one process is refused too; close, then reopen works; what
// earlier versions and crashes left (a pid LOCK file) blocks nothing.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import type { ConflictError } from '../../src/errors.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';
import { unshareAsRoot } from '../support/user-namespace.js';

const HOLDER = [...nodeEntry('test/support/lock-holder.ts')];

/** Starts a holder (optionally under a prefix command such as unshare) and waits for its first line. */
async function startHolder(dir: string, prefix: string[] = []): Promise<{ child: ChildProcess; line: string }> {
  const argv = [...prefix, process.execPath, ...HOLDER, dir];
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const line = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`holder exited with ${code} before it said anything: ${out}`)));
  });
  return { child, line };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

const isLocked = (e: ConflictError) => e.code === 'STORE_LOCKED';

test('a refused open (library or CLI admin command) names the holding process; after the holder is killed with SIGKILL a new process opens', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir();
  const { child, line } = await startHolder(dir);
  t.after(() => child.kill('SIGKILL'));
  assert.equal(line, `held ${child.pid}`);
  await assert.rejects(TraceStore.open(dir), (e: ConflictError) => isLocked(e) && e.message.includes(`in use by process ${child.pid}`));
  const admin = spawnSync(process.execPath, [...nodeEntry('src/cli.ts'), 'users', 'list', '--data', dir], { encoding: 'utf8' });
  assert.equal(admin.status, 1, 'an admin command is refused while a server holds the folder');
  assert.match(admin.stderr, new RegExp(`in use by process ${child.pid}`));
  child.kill('SIGKILL');
  await exited(child);
  const store = await TraceStore.open(dir); // the kernel dropped the dead holder's lock: nothing to take over
  await store.close();
  const after = spawnSync(process.execPath, [...nodeEntry('src/cli.ts'), 'users', 'list', '--data', dir], { encoding: 'utf8' });
  assert.equal(after.status, 0, after.stderr);
});

test('a process running as pid 1, killed with SIGKILL and started again as pid 1, opens the folder', { timeout: 60_000 }, async (t) => {
  // As root, or as another user in a user namespace of its own (root there) where the kernel allows it.
  const ns = unshareAsRoot(['-pf', '--mount-proc']);
  if ('why' in ns) {
    t.skip(ns.why);
    return;
  }
  const dir = tempDir();
  const asPid1 = ns.prefix;
  // unshare forks the pid-1 process; kill that one (seen from here by its host pid), as `docker kill` would
  const killPid1 = async (unshare: ChildProcess) => {
    if (unshare.exitCode !== null || unshare.signalCode !== null) return;
    const forked = readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    for (const pid of forked) process.kill(pid, 'SIGKILL');
    await exited(unshare);
  };
  const first = await startHolder(dir, asPid1);
  t.after(() => killPid1(first.child));
  assert.equal(first.line, 'held 1');
  await killPid1(first.child);
  const second = await startHolder(dir, asPid1);
  t.after(() => killPid1(second.child));
  assert.equal(second.line, 'held 1');
});

const SECOND_OPEN =
  'a second open in the same process is refused (also by another spelling of the path, also when both start together); close then reopen works';
test(SECOND_OPEN, async () => {
  const dir = tempDir();
  const store = await TraceStore.open(dir);
  try {
    await assert.rejects(TraceStore.open(dir), (e: ConflictError) => isLocked(e) && e.message.includes(`in use by process ${process.pid}`));
    const alias = join(tempDir(), 'alias');
    symlinkSync(dir, alias);
    await assert.rejects(TraceStore.open(join(alias, '.')), isLocked);
  } finally {
    await store.close();
  }
  const results = await Promise.allSettled([TraceStore.open(dir), TraceStore.open(dir)]);
  const opened = results.filter((r) => r.status === 'fulfilled');
  assert.equal(opened.length, 1);
  assert.ok(results.some((r) => r.status === 'rejected' && isLocked(r.reason)));
  await (opened[0] as PromiseFulfilledResult<TraceStore>).value.close();
  const again = await TraceStore.open(dir);
  await again.close();
});

test('a pid LOCK file left by an earlier version blocks nothing, even one naming a live process; it is removed', async () => {
  for (const pid of [process.pid, 1]) {
    const dir = tempDir();
    writeFileSync(join(dir, 'LOCK'), String(pid));
    const store = await TraceStore.open(dir);
    assert.equal(existsSync(join(dir, 'LOCK')), false);
    await store.close();
  }
});

test('a lock file creation cut short by a crash leaves nothing that blocks the next open', async () => {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'lock.duckdb.tmp-4242-0badf00d'), ''); // a creator killed before it wrote anything
  const store = await TraceStore.open(dir);
  assert.equal(existsSync(join(dir, 'lock.duckdb.tmp-4242-0badf00d')), false);
  await store.close();
});
