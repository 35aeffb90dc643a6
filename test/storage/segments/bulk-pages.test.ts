// Guarantees of an import that copies its source's pages: from a whole Parquet export (row groups of
// one kind, nothing to change) the segments are made of the file's own column chunks plus the
// columns the store adds, and hold exactly what the ordinary import (DuckDB re-encoding every
// column) writes from the same rows: every column, sequence numbers in file order, shredded metrics,
// tag_set; rows that need a change (an id in capitals) go the ordinary way.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { rowGroupRows, SPLICE_KEY, spliceParquet } from '../../../src/storage/parquet/parquet-splice.js';
import { everyKindTrace, openStore, tempDir } from '../../support/helpers.js';
import { int, raw, sql } from '../../../src/query/sql.js';
import { stringLiteral } from '../../../src/db/sql-string.js';

const uuidFor = (i: number) => `abcdef00-0000-4000-8000-${String(i).padStart(12, '0')}`;

test('an import of a whole Parquet export copies its pages and writes what the ordinary import writes', async (t) => {
  // Row groups of 8 rows: the export's are the segments' own.
  const src = await openStore(t, { rowGroupSize: 8 });
  const traces = Array.from({ length: 30 }, (_, i) => ({
    ...everyKindTrace(`t${i}`),
    id: uuidFor(i),
    tags: i % 3 === 0 ? [] : [`tag${i % 4}`, 'b', 'a'],
    created_at: new Date(Date.UTC(2026, 2, 1) + i * 1000).toISOString(),
  }));
  await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: traces as never });
  await src.store.flush();
  const dir = tempDir(t);
  const file = join(dir, 'all.parquet');
  await src.store.data.exportFile(src.projectId, file, { format: 'parquet' });
  const db = await Database.open({ connections: 1 });
  t.after(() => db.close());
  // The same rows in the same row groups (each of one kind), ids in capitals: the import must
  // lowercase them, so it re-encodes them.
  const upper = join(dir, 'upper.parquet');
  const parts: string[] = [];
  let at = 0;
  for (const [i, n] of rowGroupRows(file).entries()) {
    parts.push(join(dir, `part-${i}.parquet`));
    await db.run(
      sql`COPY (SELECT * EXCLUDE (file_row_number) REPLACE (upper(id) AS id) FROM read_parquet(${stringLiteral(file)}, file_row_number = true)
          WHERE file_row_number BETWEEN ${int(at)} AND ${int(at + n - 1)}) TO ${stringLiteral(parts[i]!)} (FORMAT parquet)`,
    );
    at += n;
  }
  spliceParquet(upper, parts);
  assert.deepEqual(rowGroupRows(upper), rowGroupRows(file));

  const copied = await openStore(t, { rowGroupSize: 8, autoCompact: false }, join(tempDir(t), 'pages'));
  const plain = await openStore(t, { rowGroupSize: 8, autoCompact: false }, join(tempDir(t), 'plain'));
  const a = await copied.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  const b = await plain.store.data.importFile(upper, { project: 'test-project', logStream: 'default' });
  assert.equal(a.records, b.records);

  const segs = (d: string) => loadManifest(d).segments.map((s) => join(d, s.file));
  const spliced = async (files: string[]) => {
    let n = 0;
    for (const f of files)
      n += Number(
        (await db.all(sql`SELECT decode(value) AS v FROM parquet_kv_metadata(${f}) WHERE decode(key) = ${SPLICE_KEY}`))[0]?.['v'] ?? 0,
      );
    return n;
  };
  assert.ok((await spliced(segs(copied.dir))) > 0, 'row groups were copied from the file');
  assert.equal(await spliced(segs(plain.dir)), 0, 'ids in capitals: re-encoded');
  // Not for want of row groups of one kind: lowercase ids of the same layout would be copied.
  // Same columns in the same order, kind by kind.
  for (const kind of ['span', 'trace', 'session']) {
    const one = (d: string) => join(d, loadManifest(d).segments.find((s) => s.kind === kind)!.file);
    const cols = async (f: string) =>
      (await db.all(sql`DESCRIBE SELECT * FROM read_parquet(${f})`)).map((r) => `${r['column_name']}:${r['column_type']}`);
    assert.deepEqual(await cols(one(copied.dir)), await cols(one(plain.dir)), kind);
  }
  // Every stored value but the ids' project and run (each folder's own), sequence numbers relative.
  const rows = (d: string, p: string, r: string, what = raw('to_json(x)::VARCHAR AS j')) =>
    sql`SELECT ${what} FROM (SELECT * EXCLUDE (seq, project_id, run_id),
       seq - (SELECT min(seq) FROM read_parquet(${segs(d)}, union_by_name = true)) AS rel, project_id = ${p} AS p, run_id = ${r} AS r
       FROM read_parquet(${segs(d)}, union_by_name = true)) x`;
  const run = (d: string) => loadManifest(d).segments[0]!.run_id;
  const left = rows(copied.dir, copied.projectId, run(copied.dir));
  const right = rows(plain.dir, plain.projectId, run(plain.dir));
  const diff = await db.all(sql`SELECT count(*) AS n FROM ((${left} EXCEPT ALL ${right}) UNION ALL (${right} EXCEPT ALL ${left}))`);
  assert.equal(Number(diff[0]!['n']), 0, 'the same rows, values and sequence numbers');
  const total = await db.all(
    sql`SELECT count(*) AS n, bool_and(p AND r) AS ok FROM (${rows(copied.dir, copied.projectId, run(copied.dir), raw('p, r'))})`,
  );
  assert.equal(Number(total[0]!['n']), a.records);
  assert.equal(total[0]!['ok'], true, "the target's project and run");
  // Reads agree too.
  const q =
    'SELECT count(*) AS n, count(DISTINCT id) AS d, sum(num_input_tokens) AS tokens, ' +
    "string_agg(DISTINCT array_to_string(tags, ','), '|' ORDER BY array_to_string(tags, ',')) AS tags FROM spans";
  assert.deepEqual(await copied.store.data.sql(q), await plain.store.data.sql(q));
});
