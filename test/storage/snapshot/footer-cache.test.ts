// Guarantee: seals and merges leave no Parquet footers in DuckDB's caches. Each reads a segment's
// footer once (a seal its new file's stats, a merge its inputs); cached, the footer of every segment
// ever written stayed in memory, merged-away ones too, until the memory limit pressed (memory that
// grew with stored spans). Reads still cache the footers they plan from.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Database } from '../../../src/db/database.js';
import { openRecordStore, toolRows } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';

async function cached(db: Database): Promise<{ footers: number; fileBytes: number }> {
  const rows = await db.all(
    sql`SELECT tag, memory_usage_bytes AS b FROM duckdb_memory() WHERE tag IN ('OBJECT_CACHE', 'EXTERNAL_FILE_CACHE')`,
  );
  const by = Object.fromEntries(rows.map((r) => [String(r['tag']), Number(r['b'])]));
  return { footers: by['OBJECT_CACHE'] ?? 0, fileBytes: by['EXTERNAL_FILE_CACHE'] ?? 0 };
}

function parquetFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => join(dir, f));
}

test('seals and merges keep no footers or file bytes in DuckDB; reads still cache footers', { timeout: 60_000 }, async (t) => {
  const { dir, store } = await openRecordStore(t, { mergeThreads: 1 });
  assert.notEqual(store.mergeDb, store.db, 'merges write on a database of their own');
  // Eight sealed segments of one partition, then merged (the tiered policy merges four and more).
  for (let i = 0; i < 8; i++) {
    await store.append(toolRows(i * 2000, 2000, { input: `input ${i} `.repeat(20) }), false);
    await store.seal();
  }
  const merges = await store.compact();
  assert.ok(merges >= 1, `the segments were merged (${merges} merges)`);
  assert.deepEqual(await cached(store.db), { footers: 0, fileBytes: 0 }, "the store's database after seals and merges");
  assert.deepEqual(await cached(store.mergeDb), { footers: 0, fileBytes: 0 }, 'the merge database after merges');

  // A read on the store's pool still keeps the footer of what it reads (planning reads it again and again).
  const files = parquetFiles(join(dir, 'records'));
  assert.ok(files.length >= 1);
  const [row] = await store.db.all(sql`SELECT count(*) AS n FROM read_parquet(${files}, hive_partitioning = false)`);
  assert.equal(Number(row!['n']), 16_000);
  const after = await cached(store.db);
  assert.ok(after.footers > 0, `a read caches its footers (${after.footers} bytes)`);
  assert.equal(after.fileBytes, 0, 'no file bytes are kept');
});
