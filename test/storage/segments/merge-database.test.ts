// Guarantee: a merge, one statement that runs for seconds, does not keep memory tables sealed while it
// runs. DuckDB keeps a dropped table's data while any transaction older than the DROP is open (it may
// still read the table); merges write on a database of their own (mergeThreads), so only the seal's
// own statement can hold a table back. A transaction held open where merges write stands for a long
// merge here.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import type { RecordStore } from '../../../src/storage/record-store.js';
import { openRecordStore, toolRows } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';

const MiB = 1024 * 1024;

async function tableBytes(store: RecordStore): Promise<number> {
  const m = await store.duckdbMemory();
  return (m['in_memory_table'] ?? 0) + (m['column_data'] ?? 0) + (m['overflow_strings'] ?? 0);
}

/** Rows with ~1 KB of input each, about `mib` MiB in a memory table. */
async function fill(store: RecordStore, mib: number): Promise<void> {
  const input = 'i'.repeat(1000);
  for (let k = 0; k < mib * 1024; k += 1024) await store.append(toolRows(k, 1024, { input: `${input}${k}` }), false);
  await store.settled();
}

for (const mergeThreads of [1, 2]) {
  test(`a table sealed while a merge writes is freed before the merge ends (mergeThreads ${mergeThreads})`, {
    timeout: 60_000,
  }, async (t) => {
    const { store } = await openRecordStore(t, { mergeThreads });
    assert.notEqual(store.mergeDb, store.db, 'merges write on a database of their own');
    await fill(store, 24);
    const held = await tableBytes(store);
    assert.ok(held > 16 * MiB, `the memory table holds the rows (${held} bytes)`);
    await store.mergeDb.withConnection(async (merge) => {
      // A merge's statement in progress: its transaction is open while the table is sealed and dropped.
      await merge.run(sql`BEGIN TRANSACTION`);
      await merge.run(sql`SELECT count(*) FROM range(10)`);
      await store.seal();
      let left = held;
      for (let i = 0; i < 100 && left > held / 4; i++) {
        await sleep(50);
        left = await tableBytes(store);
      }
      await merge.run(sql`ROLLBACK`);
      assert.ok(left <= held / 4, `the sealed table's data is freed while the merge runs (${left} of ${held} bytes left)`);
    });
  });
}

test('mergeThreads 0: merges write on the store database (as before)', async (t) => {
  const { store } = await openRecordStore(t, { mergeThreads: 0 });
  assert.equal(store.mergeDb, store.db);
});
