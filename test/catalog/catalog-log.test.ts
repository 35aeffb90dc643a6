// Crash recovery of catalog.log: a torn tail is cut (never padded), a commit of several changes is
// applied whole or not at all, damage with whole commits after it stops the open instead of silently
// dropping them, and folders written one change per line by earlier versions still open.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Catalog, type Project } from '../../src/catalog/catalog.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { arm, disarm, installFaults } from '../support/fs-faults.js';
import { tempDir } from '../support/helpers.js';

const LOG = 'catalog.log';

function names(c: Catalog): string[] {
  return c
    .table<Project>('projects')
    .map((p) => p.name)
    .sort();
}

function withCatalog<T>(dir: string, fn: (c: Catalog) => T): T {
  const c = Catalog.open(dir);
  try {
    return fn(c);
  } finally {
    c.close();
  }
}

/** A fresh folder holding exactly `bytes` as its catalog.log. */
function folderWith(bytes: Uint8Array): string {
  const dir = tempDir();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, LOG), bytes);
  return dir;
}

test('a tear just before the last newline drops that change, pads nothing, and loses nothing acknowledged later', async (t) => {
  const dir = tempDir(t);
  {
    const store = await TraceStore.open(dir);
    store.createProject({ name: 'alpha' });
    store.createProject({ name: 'beta' });
    await store.close();
  }
  const path = join(dir, LOG);
  const torn = statSync(path).size - 1;
  truncateSync(path, torn); // beta's write reached disk but for its newline: it was never acknowledged
  {
    const store = await TraceStore.open(dir);
    const recovered = statSync(path).size;
    const nul = readFileSync(path).includes(0);
    store.createProject({ name: 'gamma' }); // acknowledged: fsynced
    await store.close();
    for (let round = 0; round < 2; round++) {
      const again = await TraceStore.open(dir);
      assert.deepEqual(
        again
          .findProjects()
          .map((p) => p.name)
          .sort(),
        ['alpha', 'gamma'],
        `reopen ${round + 1}: every acknowledged project, not the torn one`,
      );
      await again.close();
    }
    assert.ok(recovered <= torn, `recovery never extends the log (${torn} -> ${recovered} bytes)`);
    assert.ok(!nul, 'no NUL byte in the log');
  }
});

test('a final line without its newline is torn even when it parses; the file is only ever shortened', (t) => {
  const dir = tempDir(t);
  withCatalog(dir, (c) => {
    c.createProject({ name: 'one' }, null);
    c.createProject({ name: 'two' }, null);
  });
  const full = readFileSync(join(dir, LOG));
  const first = full.indexOf(0x0a) + 1;
  for (const cut of [first, first + 1, full.length - 1]) {
    const d = folderWith(full.subarray(0, cut));
    assert.deepEqual(withCatalog(d, names), ['one'], `cut at ${cut}`);
    assert.equal(statSync(join(d, LOG)).size, first, `cut at ${cut}: the torn part is removed`);
    withCatalog(d, (c) => c.createProject({ name: 'three' }, null));
    assert.deepEqual(withCatalog(d, names), ['one', 'three'], `cut at ${cut}: the change after recovery survives`);
  }
});

test('a commit of several changes survives a crash whole or not at all, at every byte', (t) => {
  const dir = tempDir(t);
  const before = withCatalog(dir, (c) => {
    c.createUser({ email: 'owner@example.com' });
    return statSync(join(dir, LOG)).size;
  });
  withCatalog(dir, (c) => {
    const user = c.table<{ id: string }>('users')[0]!;
    c.createProject({ name: 'owned' }, user.id); // the project and its owner membership: one commit
  });
  const full = readFileSync(join(dir, LOG));
  for (let cut = before; cut <= full.length; cut++) {
    const d = folderWith(full.subarray(0, cut));
    withCatalog(d, (c) => {
      const projects = c.table('projects').length;
      const members = c.table('project_members').length;
      assert.equal(c.table('users').length, 1, `cut at ${cut}: the earlier commit`);
      assert.equal(projects, members, `cut at ${cut}: project ${projects}, memberships ${members}`);
      assert.equal(projects, cut === full.length ? 1 : 0, `cut at ${cut}`);
    });
  }
  const line = full.subarray(before).toString();
  assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, 'the commit is one line');
  assert.equal((JSON.parse(line) as { c: unknown[] }).c.length, 2);
});

test('a damaged line with whole commits after it stops the open with the file and offset, and changes nothing', (t) => {
  const dir = tempDir(t);
  withCatalog(dir, (c) => {
    c.createProject({ name: 'a' }, null);
    c.createProject({ name: 'b' }, null);
    c.createProject({ name: 'c' }, null);
  });
  const full = readFileSync(join(dir, LOG));
  const second = full.indexOf(0x0a) + 1;
  for (const damage of ['flip', 'garbage'] as const) {
    const bytes = Buffer.from(full);
    if (damage === 'flip')
      bytes[second + 40] = bytes[second + 40]! ^ 0x01; // bit rot inside the JSON: its CRC no longer matches
    else bytes.fill(0x7e, second, second + 12);
    const d = folderWith(bytes);
    assert.throws(
      () => Catalog.open(d),
      (err: Error & { offset?: number; file?: string; code?: string }) => {
        assert.equal(err.name, 'CatalogLogError');
        assert.equal(err.code, 'STORAGE_FAILURE');
        assert.equal(err.offset, second);
        assert.equal(err.file, join(d, LOG));
        assert.match(err.message, new RegExp(`catalog\\.log is damaged at byte ${second}`));
        return true;
      },
      damage,
    );
    assert.deepEqual(readFileSync(join(d, LOG)), bytes, `${damage}: the file is left as it was`);
  }
});

test('a damaged last line is a torn write: cut, and the commits before it kept', (t) => {
  const dir = tempDir(t);
  withCatalog(dir, (c) => {
    c.createProject({ name: 'kept' }, null);
    c.createProject({ name: 'damaged' }, null);
  });
  const full = readFileSync(join(dir, LOG));
  const second = full.indexOf(0x0a) + 1;
  const bytes = Buffer.from(full);
  bytes[full.length - 10] = bytes[full.length - 10]! ^ 0x01;
  const d = folderWith(bytes);
  assert.deepEqual(withCatalog(d, names), ['kept']);
  assert.equal(statSync(join(d, LOG)).size, second);
});

test('folders written one change per line by earlier versions open, and take new commits', () => {
  const now = new Date().toISOString();
  const project = (id: string, name: string) => ({
    op: 'put',
    table: 'projects',
    value: { id, name, type: 'gen_ai', created_at: now, updated_at: now, created_by: null, description: null, labels: [] },
  });
  const old = [project('p1', 'old-one'), project('p2', 'old-two'), { op: 'del', table: 'projects', id: 'p2' }, project('p3', 'old-three')];
  const dir = folderWith(Buffer.from(`${old.map((c) => JSON.stringify(c)).join('\n')}\n`));
  assert.deepEqual(withCatalog(dir, names), ['old-one', 'old-three']);
  withCatalog(dir, (c) => c.createProject({ name: 'new' }, null));
  assert.deepEqual(withCatalog(dir, names), ['new', 'old-one', 'old-three']);

  // An earlier version padded a torn tail with a NUL and appended after it: those changes are whole.
  const glued = Buffer.from(`${JSON.stringify(old[0])}\n${JSON.stringify(old[1])}\0${JSON.stringify(old[3])}\n`);
  assert.deepEqual(withCatalog(folderWith(glued), names), ['old-one', 'old-three', 'old-two']);
});

test('after a failed fsync the log is not trusted again: the next commit starts from a fresh snapshot', (t) => {
  installFaults();
  const dir = tempDir(t);
  withCatalog(dir, (c) => {
    c.createProject({ name: 'alpha' }, null);
    arm(
      dir,
      (call) => call.cls === 'fsync' && call.path.endsWith(LOG),
      () => 'EIO',
    );
    try {
      assert.throws(() => c.createProject({ name: 'beta' }, null), /catalog log failed/);
    } finally {
      disarm();
    }
    assert.deepEqual(names(c), ['alpha'], 'a failed commit is not applied');
    c.createProject({ name: 'gamma' }, null);
    // Everything acknowledged before the failure now lives in the snapshot; the log holds only what came after.
    const snapshot = JSON.parse(readFileSync(join(dir, 'catalog.json'), 'utf8')) as { projects: { name: string }[] };
    assert.deepEqual(
      snapshot.projects.map((p) => p.name),
      ['alpha'],
    );
    const lines = readFileSync(join(dir, LOG), 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 1, "the log holds gamma's commit alone");
    assert.match(lines[0]!, /gamma/);
  });
  withCatalog(dir, (c) => assert.deepEqual(names(c), ['alpha', 'gamma']));
});
