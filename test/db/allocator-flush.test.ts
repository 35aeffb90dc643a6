// Guarantee: a database opened with bulkFreeThreshold gives memory DuckDB frees in bulk (a Parquet row
// group written and the buffers read for it: a merge does little else) back to the system from that
// size on, instead of keeping it as free pages while a COPY runs; merges open theirs with 16 MB. A
// database opened without it keeps DuckDB's default (512 MiB), as the store's own does (database.ts
// says why). What this does to a merge's peak memory is a measurement, for bench/, not a test: a bound
// on resident memory fails or passes with whatever else the machine runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Database } from '../../src/db/database.js';
import { sql } from '../../src/query/sql.js';
import { openMergeDatabase } from '../../src/storage/segments/merge.js';
import { tempDir } from '../support/helpers.js';

const UNITS: Record<string, number> = { B: 1, KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, KB: 1e3, MB: 1e6, GB: 1e9 };

/** A DuckDB size setting in bytes (it renders them as e.g. '15.2 MiB', to one decimal). */
async function sizeSetting(db: Database, name: string): Promise<number> {
  const [row] = await db.all(sql`SELECT current_setting(${name})::VARCHAR AS v`);
  const m = /^([\d.]+)\s*([KMG]i?B|B)$/.exec(String(row!['v']));
  assert.ok(m, `${name} = ${String(row!['v'])}`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

const near = (got: number, want: number) => Math.abs(got - want) <= want * 0.01;

test('merges free bulk deallocations from 16 MB; a database opened without the option keeps the default', async (t) => {
  const merge = await openMergeDatabase(tempDir(t), 1);
  t.after(() => merge.close());
  const bulk = await sizeSetting(merge, 'allocator_bulk_deallocation_flush_threshold');
  assert.ok(near(bulk, 16e6), `the merge database: ${bulk} bytes`);

  const plain = await Database.open();
  t.after(() => plain.close());
  assert.ok(near(await sizeSetting(plain, 'allocator_bulk_deallocation_flush_threshold'), 512 * 2 ** 20), 'DuckDB default');

  const chosen = await Database.open({ bulkFreeThreshold: '48MB' });
  t.after(() => chosen.close());
  assert.ok(near(await sizeSetting(chosen, 'allocator_bulk_deallocation_flush_threshold'), 48e6), 'the option is applied');
  // Every database gives free memory back from 32 MB on (DuckDB's default keeps 128 MiB).
  for (const db of [merge, plain, chosen]) assert.ok(near(await sizeSetting(db, 'allocator_flush_threshold'), 32e6));
});
