// Guarantees of the value index (src/storage/indexes/value-index.ts): each indexed column's values
// are the segment's distinct values, each with exactly the rows DuckDB finds holding it (tags: rows
// whose list holds the tag), NULLs in none; a column with more distinct values than the cap is left
// out; a damaged file or one of other rows is not used; segments below valueIndexMinRows get none;
// a writable open builds the index of listed segments that lack it (an older version's folder), a
// merge writes its segment's and removes its inputs'.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Database } from '../../../src/db/database.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { ident, sql } from '../../../src/query/sql.js';
import { crc32 } from '../../../src/storage/crc32.js';
import { metricCodeLimits, sectionBytes } from '../../../src/storage/indexes/metric-codes.js';
import {
  markMetricValueRows,
  markValueRows,
  MAX_VALUES,
  writeValueIndex,
  VALUE_COLUMNS,
  valueIndexCache,
  valueIndexOf,
  valueIndexPath,
  type ValueColumnIndex,
} from '../../../src/storage/indexes/value-index.js';
import { generateBatches } from '../../support/generator.js';
import { openStore } from '../../support/helpers.js';

function rowsOfBits(bits: Uint32Array): number[] {
  const out: number[] = [];
  for (let r = 0; r < bits.length * 32; r++) if ((bits[r >>> 5]! >>> (r & 31)) & 1) out.push(r);
  return out;
}

const segmentFiles = (dir: string): { abs: string; rows: number; kind: string; metrics: number[] }[] =>
  (
    JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
      segments: { file: string; rows: number; kind: string; metrics: number[] }[];
    }
  ).segments.map((s) => ({ abs: join(dir, s.file), rows: s.rows, kind: s.kind, metrics: s.metrics }));

test('each value lists exactly the rows DuckDB finds holding it', { timeout: 120_000 }, async (t) => {
  const fx = await openStore(t, { autoCompact: false, valueIndexMinRows: 0, segmentCountMinRows: 1 });
  for (const b of generateBatches({ spans: 2500, batchSpans: 500, seed: 41 }))
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
  await fx.store.flush();
  const segs = segmentFiles(fx.dir);
  assert.ok(segs.length >= 3, 'span, trace and session segments');
  const db = await Database.open({ threads: 1 });
  t.after(() => db.close());
  // Postings stored each way: varints for rare values, a bitmap where those would take as many bytes.
  let bitmaps = 0;
  let varints = 0;
  let dense: { seg: (typeof segs)[number]; col: ValueColumnIndex; v: number } | undefined;
  for (const seg of segs) {
    const ix = valueIndexOf(seg.abs, seg.rows);
    if (ix === null) assert.fail(`${seg.kind} segment has a value index`);
    for (const [c, name] of VALUE_COLUMNS.entries()) {
      const col: ValueColumnIndex | null = ix.columns[c] ?? null;
      if (!col) assert.fail(`${seg.kind}.${name} is indexed`);
      // The truth, from DuckDB: each value's rows (tags unnested), NULLs left out.
      const src = sql`read_parquet(${seg.abs}, file_row_number = true)`;
      const pairs =
        name === 'tags'
          ? sql`SELECT unnest(list_distinct(tags)) AS v, file_row_number AS r FROM ${src}`
          : sql`SELECT ${ident(name)} AS v, file_row_number AS r FROM ${src}`;
      const truth = await db.all(sql`SELECT v, list(r ORDER BY r) AS rows FROM (${pairs}) WHERE v IS NOT NULL GROUP BY v`);
      const want = new Map(truth.map((r) => [String(r['v']), (r['rows'] as unknown[]).map(Number)]));
      assert.deepEqual([...col.values].sort(), [...want.keys()].sort(), `${seg.kind}.${name}: the distinct values`);
      for (const [v, value] of col.values.entries()) {
        if (col.lengths[v] === Math.ceil(seg.rows / 8)) {
          bitmaps++;
          if (seg.rows % 8 !== 0) dense ??= { seg, col, v };
        } else varints++;
        const bits = new Uint32Array(Math.ceil(seg.rows / 32));
        assert.ok(
          markValueRows(ix, col, (x) => x === value, bits),
          `${seg.kind}.${name} = ${value}: its postings read whole`,
        );
        assert.deepEqual(rowsOfBits(bits), want.get(value), `${seg.kind}.${name} = ${value}`);
        assert.equal(col.counts[v], want.get(value)!.length);
      }
    }
  }
  // Each stored metric: every distinct value's rows are exactly DuckDB's (NULLs in none).
  for (const seg of segs) {
    const ix = valueIndexOf(seg.abs, seg.rows)!;
    assert.deepEqual([...ix.metrics.keys()].sort(), [...seg.metrics].sort(), `${seg.kind}: a section for each stored metric`);
    for (const [id, section] of ix.metrics) {
      const truth = await db.all(
        sql`SELECT v, list(r ORDER BY r) AS rows FROM (SELECT ${ident(`m${id}`)} AS v, file_row_number AS r
            FROM read_parquet(${seg.abs}, file_row_number = true)) WHERE v IS NOT NULL GROUP BY v`,
      );
      assert.equal(section.distinct, truth.length, `${seg.kind}.m${id}: distinct values`);
      assert.equal(
        section.present,
        truth.reduce((n, r) => n + (r['rows'] as unknown[]).length, 0),
        `${seg.kind}.m${id}: rows with a value`,
      );
      for (const r of truth) {
        const bits = new Uint32Array(Math.ceil(seg.rows / 32));
        const v = Number(r['v']);
        assert.ok(markMetricValueRows(ix, section, { lo: v, loOpen: false, hi: v, hiOpen: false }, bits));
        assert.deepEqual(rowsOfBits(bits), (r['rows'] as unknown[]).map(Number), `${seg.kind}.m${id} = ${r['v']}`);
      }
    }
  }
  assert.ok(bitmaps > 0 && varints > 0, `postings as bitmaps (${bitmaps}) and as varints (${varints})`);
  // A bitmap with a row past the segment's last (its checksum made to match) is refused.
  assert.ok(dense, 'a bitmap of a segment whose rows do not fill its last byte');
  {
    const path = valueIndexPath(dense.seg.abs);
    const good = readFileSync(path);
    const ix = valueIndexOf(dense.seg.abs, dense.seg.rows)!;
    const at = dense.col.offsets[dense.v]!;
    const len = dense.col.lengths[dense.v]!;
    const bad = Buffer.from(good);
    bad[at + len - 1]! |= 0x80;
    bad.writeUInt32LE(crc32(bad.subarray(at, at + len)), at + len);
    writeFileSync(path, bad);
    const which = (x: string) => x === dense!.col.values[dense!.v];
    assert.equal(markValueRows(ix, dense.col, which, new Uint32Array(Math.ceil(dense.seg.rows / 32))), false, 'a row past the last');
    writeFileSync(path, good);
    assert.ok(markValueRows(ix, dense.col, which, new Uint32Array(Math.ceil(dense.seg.rows / 32))), 'the whole bitmap reads');
  }
  // Loaded files beyond the budget are let go, least recently used first (copies: new paths, not loaded yet).
  const copies = segs.map((s) => ({ ...s, abs: s.abs.replace(/\.parquet$/, '-lru.parquet') }));
  for (const [i, c] of copies.entries()) writeFileSync(valueIndexPath(c.abs), readFileSync(valueIndexPath(segs[i]!.abs)));
  const budget = valueIndexCache.budget;
  const held = valueIndexCache.bytes;
  valueIndexCache.budget = held + statSync(valueIndexPath(copies[0]!.abs)).size;
  try {
    for (const c of copies) assert.ok(valueIndexOf(c.abs, c.rows), 'a copy loads');
    const last = statSync(valueIndexPath(copies.at(-1)!.abs)).size;
    assert.ok(valueIndexCache.bytes <= Math.max(valueIndexCache.budget, last), 'the kept files fit the budget (or are the last one alone)');
    assert.ok(valueIndexCache.bytes < held + copies.reduce((n, c) => n + statSync(valueIndexPath(c.abs)).size, 0), 'some were let go');
    assert.ok(valueIndexOf(copies[0]!.abs, copies[0]!.rows), 'one let go loads again');
  } finally {
    valueIndexCache.budget = budget;
    for (const c of copies) rmSync(valueIndexPath(c.abs));
  }
  // Damaged postings are not used (that segment is read instead); a damaged directory, or one of
  // another row count, leaves the whole file unused.
  const span = segs.find((s) => s.kind === 'span')!;
  const good = readFileSync(valueIndexPath(span.abs));
  const ix = valueIndexOf(span.abs, span.rows)!;
  const model = ix.columns[VALUE_COLUMNS.indexOf('model')]!;
  const bad = Buffer.from(good);
  // The first row's lowest bit: still postings in form, of another row (only the checksum tells).
  bad[model.offsets[0]!]! ^= 0x01;
  writeFileSync(valueIndexPath(span.abs), bad);
  assert.equal(
    markValueRows(ix, model, (x) => x === model.values[0], new Uint32Array(Math.ceil(span.rows / 32))),
    false,
    'damaged postings are refused',
  );
  const filters = [{ type: 'text', column_id: 'model', operator: 'eq', value: model.values[0] }];
  const got = await fx.store.count('span', fx.projectId, { log_stream_id: fx.logStreamId, filters } as never);
  assert.equal(got.total_count, model.counts[0], 'the count reads the segment instead, and agrees');
  writeFileSync(valueIndexPath(span.abs), good);
  // A damaged metric section is refused the same way: the count reads the segment.
  const [id, section] = [...ix.metrics].find(([, m]) => m.distinct > 1)!;
  const metricBad = Buffer.from(good);
  metricBad[section.offset + sectionBytes(section) - 1]! ^= 0x40;
  writeFileSync(valueIndexPath(span.abs), metricBad);
  const all = { lo: Number.NEGATIVE_INFINITY, loOpen: false, hi: Number.POSITIVE_INFINITY, hiOpen: false };
  const fresh = () => new Uint32Array(Math.ceil(span.rows / 32));
  assert.equal(markMetricValueRows(ix, section, all, fresh()), false, 'a damaged section is refused');
  // A row past the last (its checksum made to match) is refused too.
  const end = section.offset + sectionBytes(section);
  const pastLast = Buffer.from(good);
  pastLast.writeUInt32LE(span.rows + 3, end - 4);
  pastLast.writeUInt32LE(crc32(pastLast.subarray(section.offset, end)), end);
  writeFileSync(valueIndexPath(span.abs), pastLast);
  assert.equal(markMetricValueRows(ix, section, all, fresh()), false, 'a row past the last is refused');
  writeFileSync(valueIndexPath(span.abs), good);
  assert.ok(markMetricValueRows(ix, section, all, fresh()), 'the whole section reads');
  writeFileSync(valueIndexPath(span.abs), metricBad);
  const name = Object.entries(
    (JSON.parse(readFileSync(join(fx.dir, 'manifest.json'), 'utf8')) as { metric_ids: Record<string, number> }).metric_ids,
  ).find(([, v]) => v === id)![0];
  const [truth] = await db.all(sql`SELECT count(*) AS n FROM read_parquet(${span.abs}) WHERE ${ident(`m${id}`)} > 0 AND type = 'llm'`);
  const metricFilter = [
    { type: 'number', column_id: `metrics/${name}`, operator: 'gt', value: 0 },
    { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
  ];
  const viaSegment = await fx.store.count('span', fx.projectId, { log_stream_id: fx.logStreamId, filters: metricFilter } as never);
  assert.equal(viaSegment.total_count, Number(truth!['n']), 'the count reads the segment instead, and agrees');
  writeFileSync(valueIndexPath(span.abs), good);
  // A new path (the loaded directory of the old one is kept): a copy with a damaged directory.
  const copy = span.abs.replace(/\.parquet$/, '-copy.parquet');
  const dirBad = Buffer.from(good);
  dirBad[dirBad.length - 20]! ^= 0xff;
  writeFileSync(valueIndexPath(copy), dirBad);
  assert.equal(valueIndexOf(copy, span.rows), null, 'a damaged directory is not used');
  rmSync(valueIndexPath(copy));
  // A file another process writes after this one found none (a read-only store beside its writer's
  // repair) is read at the next ask: a missing or unusable file is remembered by its identity.
  const late = span.abs.replace(/\.parquet$/, '-late.parquet');
  assert.equal(valueIndexOf(late, span.rows), null, 'none yet');
  writeFileSync(valueIndexPath(late), good);
  assert.ok(valueIndexOf(late, span.rows), 'written since: read');
  rmSync(valueIndexPath(late));
  const other = span.abs.replace(/\.parquet$/, '-other.parquet');
  writeFileSync(valueIndexPath(other), good);
  assert.ok(valueIndexOf(other, span.rows), 'the whole file loads');
  assert.equal(valueIndexOf(other, span.rows + 1), null, 'an index of other rows is not used');
  rmSync(valueIndexPath(other));
  // A metric id listed without its column in the file is left out, not the whole index.
  const conn = await db.dedicated();
  await writeValueIndex(conn, span.abs, span.rows, [...span.metrics, 999]);
  const again = valueIndexOf(span.abs, span.rows)!;
  assert.deepEqual([...again.metrics.keys()].sort(), [...span.metrics].sort(), 'the metrics of the file, without 999');
  assert.ok(
    again.columns.every((c) => c !== null),
    'and every value column',
  );
});

test('a column with more distinct values than the cap is left out; small segments get no index by default', {
  timeout: 120_000,
}, async (t) => {
  const steps: string[][] = [];
  const fx = await openStore(t, { autoCompact: false, valueIndexMinRows: 0, segmentCountMinRows: 1, onPlan: (s) => steps.push([...s]) });
  // Names far past the cap (left out on the estimate alone), tag sets just past it (counted exactly).
  const n = 2 * MAX_VALUES;
  const spans = Array.from({ length: n }, (_, i) => ({
    type: 'llm',
    name: `name-${i}`,
    model: `m${i % 5}`,
    input: 'x',
    output: 'y',
    tags: [`t${i % (MAX_VALUES + 10)}`],
  }));
  await fx.store.logTraces(fx.projectId, {
    log_stream_id: fx.logStreamId,
    traces: [{ type: 'trace', name: 't', input: 'q', spans }] as never,
  });
  await fx.store.flush();
  const span = segmentFiles(fx.dir).find((s) => s.kind === 'span')!;
  const ix = valueIndexOf(span.abs, span.rows)!;
  assert.equal(ix.columns[VALUE_COLUMNS.indexOf('name')], null, 'name has too many values');
  assert.equal(ix.columns[VALUE_COLUMNS.indexOf('tags')], null, 'tags have too many tag sets');
  assert.deepEqual([...ix.columns[VALUE_COLUMNS.indexOf('model')]!.values].sort(), ['m0', 'm1', 'm2', 'm3', 'm4']);
  const count = (filters: unknown[]) =>
    fx.store.count('span', fx.projectId, { log_stream_id: fx.logStreamId, filters } as never).then((r) => r.total_count);
  assert.equal(
    await count([{ type: 'text', column_id: 'name', operator: 'eq', value: 'name-7' }]),
    1,
    'a column left out: the segment is read',
  );
  assert.equal(await count([{ type: 'collection', column_id: 'tags', operator: 'contains', value: 't3' }]), 2);
  assert.equal(
    await count([{ type: 'text', column_id: 'model', operator: 'eq', value: 'm2' }]),
    Math.floor(n / 5) + (n % 5 > 2 ? 1 : 0),
    'model is answered from the index',
  );
  assert.match(steps.at(-1)![0]!, /from value indexes/);

  // A metric with more distinct values than the cap is left out too (its counts read the segment); one
  // within it is kept.
  const cap = metricCodeLimits.maxDistinct;
  metricCodeLimits.maxDistinct = 5;
  try {
    const m = await openStore(t, { autoCompact: false, valueIndexMinRows: 0, segmentCountMinRows: 1, onPlan: (s) => steps.push([...s]) });
    const few = Array.from({ length: 40 }, (_, i) => ({ ...spans[i]!, metrics: { many: i, few: i % 5 } }));
    await m.store.logTraces(m.projectId, {
      log_stream_id: m.logStreamId,
      traces: [{ type: 'trace', name: 't', input: 'q', spans: few }] as never,
    });
    await m.store.flush();
    const seg = segmentFiles(m.dir).find((s) => s.kind === 'span')!;
    const ids = (JSON.parse(readFileSync(join(m.dir, 'manifest.json'), 'utf8')) as { metric_ids: Record<string, number> }).metric_ids;
    const mix = valueIndexOf(seg.abs, seg.rows)!;
    assert.equal(mix.metrics.has(ids['many']!), false, 'many: 40 values, left out');
    assert.equal(mix.metrics.get(ids['few']!)?.distinct, 5, 'few: 5 values, kept');
    const mcount = (metric: string) =>
      m.store
        .count('span', m.projectId, {
          log_stream_id: m.logStreamId,
          filters: [
            { type: 'number', column_id: `metrics/${metric}`, operator: 'gte', value: 2 },
            { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
          ],
        } as never)
        .then((r) => r.total_count);
    assert.equal(await mcount('many'), 38);
    assert.doesNotMatch(steps.at(-1)![0]!, /from value indexes/, 'a metric left out: the segment is read');
    assert.equal(await mcount('few'), 24);
    assert.match(steps.at(-1)![0]!, /from value indexes/, 'a metric kept: answered from the index');
  } finally {
    metricCodeLimits.maxDistinct = cap;
  }

  const small = await openStore(t, { autoCompact: false });
  await small.store.logTraces(small.projectId, {
    log_stream_id: small.logStreamId,
    traces: [{ type: 'trace', name: 't', input: 'q', spans }] as never,
  });
  await small.store.flush();
  for (const s of segmentFiles(small.dir)) assert.equal(existsSync(valueIndexPath(s.abs)), false, 'below 100,000 rows: no value index');
});

test('a writable open builds the value index of listed segments without one; a merge writes its own and removes its inputs', {
  timeout: 120_000,
}, async (t) => {
  const fx = await openStore(t, { autoCompact: false, valueIndexMinRows: 0 });
  // Six segments of each kind: enough for a merge.
  for (const b of generateBatches({ spans: 1500, batchSpans: 250, seed: 43 })) {
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
    await fx.store.flush();
  }
  await fx.store.close();
  const before = segmentFiles(fx.dir);
  for (const s of before) rmSync(valueIndexPath(s.abs));
  const reopened = await TraceStore.open(fx.dir, { autoCompact: false, valueIndexMinRows: 0, indexRepair: 'held' });
  t.after(() => reopened.close());
  assert.ok(
    before.every((s) => valueIndexOf(s.abs, s.rows) === null),
    'none before the repair',
  );
  const rebuilt = await reopened.maintenance.indexesRepaired();
  assert.ok(rebuilt >= before.length, `the repair built them (${rebuilt})`);
  assert.ok(
    before.every((s) => valueIndexOf(s.abs, s.rows) !== null),
    'each listed segment has one',
  );
  assert.ok((await reopened.maintenance.compact()).merges > 0, 'segments merged');
  const after = segmentFiles(fx.dir);
  for (const s of after) assert.ok(valueIndexOf(s.abs, s.rows), 'a merged segment has its value index');
  for (const s of before.filter((b) => !after.some((a) => a.abs === b.abs)))
    assert.equal(existsSync(valueIndexPath(s.abs)), false, 'a merged-away segment loses its value index');
  // Opened with the default size, the repair removes the indexes of segments below it.
  await reopened.close();
  assert.ok(
    after.some((s) => existsSync(valueIndexPath(s.abs))),
    'small segments with an index before',
  );
  const plain = await TraceStore.open(fx.dir, { autoCompact: false, indexRepair: 'held' });
  t.after(() => plain.close());
  await plain.maintenance.indexesRepaired();
  for (const s of after) assert.equal(existsSync(valueIndexPath(s.abs)), false, `${s.kind} segment of ${s.rows} rows: none`);
});

test('an import writes the value index of its segments', { timeout: 120_000 }, async (t) => {
  const src = await openStore(t, { autoCompact: false });
  for (const b of generateBatches({ spans: 1200, batchSpans: 400, seed: 47 }))
    await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: b as never });
  await src.store.flush();
  const file = join(src.dir, 'export.parquet');
  await src.store.data.exportFile(src.projectId, file, { log_stream_id: src.logStreamId, format: 'parquet' });
  const fx = await openStore(t, { autoCompact: false, valueIndexMinRows: 0 });
  await fx.store.data.importFile(file, { project: 'test-project', logStream: 'default' });
  const segs = segmentFiles(fx.dir);
  assert.ok(segs.length >= 3, 'segments of each kind');
  for (const s of segs) assert.ok(valueIndexOf(s.abs, s.rows), `${s.kind} segment has its value index`);
  const count = (fxx: typeof fx, filters: unknown[]) =>
    fxx.store.count('span', fxx.projectId, { log_stream_id: fxx.logStreamId, filters } as never).then((r) => r.total_count);
  const filters = [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }];
  assert.equal(await count(fx, filters), await count(src, filters), 'the imported spans count alike');
});

test('a value index that cannot be written leaves its segment without one, not the seal undone', { timeout: 60_000 }, async (t) => {
  const fx = await openStore(t, { autoCompact: false, valueIndexMinRows: 0, segmentCountMinRows: 1 });
  // A folder where the span segment's index would go: its rename fails (a fresh store numbers from 1).
  const part = join(fx.dir, 'records', `project_id=${fx.projectId}`, `run_id=${fx.logStreamId}`, 'kind=span');
  for (let i = 1; i <= 10; i++) mkdirSync(join(part, `seg-${String(i).padStart(9, '0')}.vix`), { recursive: true });
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  for (const b of generateBatches({ spans: 600, batchSpans: 300, seed: 53 }))
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
  await fx.store.flush();
  const span = segmentFiles(fx.dir).find((s) => s.kind === 'span');
  assert.ok(span, 'the span segment was sealed');
  assert.equal(valueIndexOf(span.abs, span.rows), null, 'without a value index');
  await new Promise((r) => setImmediate(r));
  assert.ok(
    warnings.some((w) => w.includes('value index') && w.includes('seg-')),
    `a warning says so: ${warnings.join(' | ')}`,
  );
  const filters = [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }];
  const got = await fx.store.count('span', fx.projectId, { log_stream_id: fx.logStreamId, filters } as never);
  assert.ok(got.total_count > 0, 'its spans are counted (by reading the segment)');
});
