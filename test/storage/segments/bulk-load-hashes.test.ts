// Guarantees of a direct import's bookkeeping: each segment's id hashes (its .ids file and the id
// index) are exactly its rows' idHash values, though they are computed out of one joined string per
// block of rows; and a file holding an id twice keeps only its later row (the duplicate check the
// whole-file check decides to skip or not).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { idHash, idHashAt } from '../../../src/storage/indexes/id-index.js';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { idsPath } from '../../../src/storage/segments/segments.js';
import { everyKindTrace, openStore, parquetExportOf, tempDir } from '../../support/helpers.js';
import { sql } from '../../../src/query/sql.js';
import { stringLiteral } from '../../../src/db/sql-string.js';

const uuidFor = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

test('idHashAt over a slice of a longer string equals idHash of that slice', () => {
  const ids = Array.from({ length: 50 }, (_, i) => `${uuidFor(i * 7919)}`);
  const joined = ids.join('');
  ids.forEach((id, i) => {
    assert.equal(idHashAt(joined, i * 36, i * 36 + 36), idHash(id), id);
  });
  assert.equal(idHashAt('xabcx', 1, 4), idHash('abc'));
  assert.notEqual(idHashAt(joined, 0, 36), idHashAt(joined, 36, 72));
});

test("a direct import's segments carry their rows' id hashes, and a re-logged id replaces the imported row", async (t) => {
  const src = await openStore(t);
  // Upper-case ids in the source: the import stores (and hashes) them lowercase.
  const traces = Array.from({ length: 40 }, (_, i) => ({
    ...everyKindTrace(`t${i}`),
    id: uuidFor(i).toUpperCase().replace('0000-4000', 'ABCD-4000'),
  }));
  await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: traces as never });
  await src.store.flush();
  const file = join(tempDir(t), 'all.parquet');
  await src.store.data.exportFile(src.projectId, file, { format: 'parquet' });

  // Row groups of 8: several blocks of rows per kind.
  const target = await openStore(t, { rowGroupSize: 8, autoCompact: false }, join(tempDir(t), 'b'));
  await target.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  const segs = loadManifest(target.dir).segments;
  assert.deepEqual(new Set(segs.map((s) => s.kind)), new Set(['span', 'trace', 'session']));
  for (const seg of segs) {
    const abs = join(target.dir, seg.file);
    const ids = (await db.all(sql`SELECT id FROM read_parquet(${abs}, hive_partitioning = false)`)).map((r) => String(r['id']));
    const expected = Float64Array.from(ids.map(idHash)).sort();
    const buf = readFileSync(idsPath(abs));
    const stored = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
    assert.deepEqual([...stored], [...expected], `${seg.kind}: .ids holds idHash of every row`);
  }
  // The in-memory index found the imported row: logging the id again leaves one version of it.
  const id = uuidFor(3).replace('0000-4000', 'abcd-4000');
  await target.store.logTraces(target.projectId, {
    log_stream_id: target.logStreamId,
    traces: [{ id, name: 'again', input: 'i', output: 'relogged', spans: [] }] as never,
  });
  await target.store.flush();
  const rows = await target.store.data.sql('SELECT output FROM traces WHERE id = $1', [id]);
  assert.deepEqual(
    rows.map((r) => r['output']),
    ['relogged'],
  );
});

test('a Parquet file holding an id twice imports its later row only', async (t) => {
  const traces = Array.from({ length: 6 }, (_, i) => ({ ...everyKindTrace(`t${i}`), id: uuidFor(i) }));
  const { dir, plain } = await parquetExportOf(t, traces);
  // The file again with trace 2 repeated at its end, its output changed (our own test SQL and paths).
  const file = join(dir, 'twice.parquet');
  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  await db.run(
    sql`COPY (SELECT * FROM (SELECT * FROM read_parquet(${stringLiteral(plain)}) ORDER BY id)
        UNION ALL SELECT * REPLACE ('later' AS output) FROM read_parquet(${stringLiteral(plain)}) WHERE id = ${stringLiteral(uuidFor(2))})
        TO ${stringLiteral(file)} (FORMAT parquet)`,
  );
  const target = await openStore(t, {}, join(tempDir(t), 'b'));
  const res = await target.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  const total = Number((await db.all(sql`SELECT count(*) AS n FROM read_parquet(${file})`))[0]!['n']);
  assert.equal(res.records, total);
  const rows = await target.store.data.sql('SELECT output FROM traces WHERE id = $1', [uuidFor(2)]);
  assert.deepEqual(
    rows.map((r) => r['output']),
    ['later'],
    'one row for the id, the later one',
  );
  const all = (await target.store.data.sql('SELECT count(*) AS n, count(DISTINCT id) AS d FROM traces'))[0]!;
  assert.equal(Number(all['n']), 6);
  assert.equal(Number(all['d']), 6);
});
