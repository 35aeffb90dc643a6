// A 100M-span store for the peer benchmark, built from the 10M template in minutes instead of hours
// through the library: the template is copied as it is (copy 0), exported once as Parquet (page-copying
// export), and nine disjoint copies of that export are derived with DuckDB and imported (the direct
// import path; page-copying where a row group holds one kind).
//
// Copy k (1..9) differs from the template only in
// - every id (id, trace_id, parent_id, session_id, previous_session_id): the version nibble of the
//   generator's v4 UUIDs (character 15, always '4' in the template: checked) becomes COPY_DIGITS[k-1],
//   never '4'; so ids of different copies never collide, within a copy the mapping is one to one, and
//   each copy's trees and sessions link exactly as the template's do;
// - created_at and updated_at: shifted by k weeks. The template spans 6.8 days, so copies are disjoint
//   in time and copy 9 is the newest: a newest-first page at 100M is copy 9's version of the 10M page,
//   and every count is exactly 10x the template's (probes/check-100m.ts verifies both).
//
// Resumable: state.json in the work folder records the copies imported (a copy interrupted mid-import
// is imported again: an import of the same rows twice is an import once).
//   node --import tsx bench/build-100m.ts [--template /work/data-10m] [--out /work/data-100m] [--work /work/h23-tmp]
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '../src/vendor/duckdb.js';
import { TraceStore } from '../src/engine/trace-store.js';
import { rowGroupRows, spliceGroups, type GroupSources } from '../src/storage/parquet/parquet-splice.js';
import type { TemplateInfo } from './peers/store-template.js';

export const COPIES = 10;
/** The version nibble of copy k's ids (copy 0 keeps the template's '4'). */
export const COPY_DIGITS = ['0', '1', '2', '3', '5', '6', '7', '8', '9'] as const;
export const WEEK_US = 7 * 86_400 * 1_000_000;
const ID_COLS = ['id', 'session_id', 'trace_id', 'parent_id', 'previous_session_id'];
const TIME_COLS = ['created_at', 'updated_at'];
/**
 * The store gets ~1M-row segments (the import's batches), which the merge policy would merge (it
 * leaves segments of 2M rows and more alone): built.json asks the harness to open copies with
 * autoCompact off, so questions are asked of the built layout, not of one being merged under them.
 * Batches of a whole part (2.95M-7.05M rows) would have made 2M+ segments, but spilled gigabytes to
 * disk in the importer, many times slower than 1M-row batches.
 */
export const OPEN_OPTIONS = { autoCompact: false } as const;

/** SQL (DuckDB) for copy k's value of a column, or the column itself. Column names are the export's own. */
export function remapExpr(col: string, k: number): string {
  const q = `"${col}"`;
  if (k === 0) return q;
  if (ID_COLS.includes(col)) return `substr(${q}, 1, 14) || '${COPY_DIGITS[k - 1]}' || substr(${q}, 16) AS ${q}`;
  if (TIME_COLS.includes(col)) return `${q} + to_microseconds(${k * WEEK_US}::BIGINT) AS ${q}`;
  return q;
}

/** A template segment's row groups in the export: [first, end), and its kind. */
interface Part {
  first: number;
  end: number;
  kind: string;
}

const OPTS = 'FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1';
const sidePath = (work: string, k: number, g: number) => join(work, `sides-${k}`, `g${g}.parquet`);

/**
 * Writes copy k of the export at `base` without re-encoding what does not change: DuckDB writes the
 * remapped columns (ids, times) of each row group of `base` as a small file of one row group (kept
 * in `<work>/sides-k`), and the copy takes every other column chunk of `base` byte for byte
 * (spliceGroups), so it has `base`'s row groups and its import copies their pages in turn.
 * Re-encoding every column with DuckDB took minutes per copy (the texts are most of the bytes).
 * Returns one file per span segment of the template: the export holds the segments one after the
 * other and two of them overlap in time, so an import batch across their boundary is out of
 * created_at order and gets sorted (spilling, many times slower than in-order rows). Trace and
 * session row groups are spliced later, all copies in one file each.
 */
async function writeCopy(
  db: DuckDBInstance,
  base: string,
  names: readonly string[],
  groupRows: readonly number[],
  k: number,
  work: string,
  parts: readonly Part[],
  template: string,
): Promise<string[]> {
  mkdirSync(join(work, `sides-${k}`), { recursive: true });
  const changed = names.filter((c) => ID_COLS.includes(c) || TIME_COLS.includes(c));
  const starts = groupRows.map((_, g) => groupRows.slice(0, g).reduce((a, b) => a + b, 0));
  let next = 0;
  const worker = async () => {
    const c = await db.connect();
    try {
      for (let g = next++; g < groupRows.length; g = next++) {
        const lo = starts[g]!;
        await c.run(
          `COPY (SELECT ${changed.map((x) => remapExpr(x, k)).join(', ')} FROM read_parquet('${base}', file_row_number = true) ` +
            `WHERE file_row_number BETWEEN ${lo} AND ${lo + groupRows[g]! - 1}) TO '${sidePath(work, k, g)}' (${OPTS}, ROW_GROUP_SIZE ${groupRows[g]! * 2})`,
        );
      }
    } finally {
      c.closeSync();
    }
  };
  await Promise.all([worker(), worker()]);
  const files: string[] = [];
  parts.forEach((p, i) => {
    if (p.kind !== 'span') return;
    const file = join(work, `copy-${k}-p${i}.parquet`);
    const groups: GroupSources[] = [];
    for (let g = p.first; g < p.end; g++)
      groups.push([
        { path: sidePath(work, k, g), group: 0 },
        { path: base, group: g },
      ]);
    spliceGroups(`${file}.part`, template, groups);
    renameSync(`${file}.part`, file);
    for (let g = p.first; g < p.end; g++) rmSync(sidePath(work, k, g));
    files.push(file);
  });
  return files;
}

interface Step {
  step: string;
  seconds: number;
  cpuSeconds: number;
  load: number;
  bytes?: number;
  records?: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      template: { type: 'string', default: '/work/data-10m' },
      out: { type: 'string', default: '/work/data-100m' },
      work: { type: 'string', default: '/work/h23-tmp' },
      threads: { type: 'string', default: '2' },
    },
  });
  const tpl = values.template!;
  const out = values.out!;
  const work = values.work!;
  mkdirSync(work, { recursive: true });
  const stateFile = join(work, 'state.json');
  const state = existsSync(stateFile)
    ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { done: number[]; steps: Step[] })
    : { done: [] as number[], steps: [] as Step[] };
  const save = () => writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  const info = JSON.parse(readFileSync(join(tpl, 'built.json'), 'utf8')) as TemplateInfo;
  const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
  const timed = async <T>(step: string, f: () => Promise<T>, extra: (r: T) => Partial<Step> = () => ({})): Promise<T> => {
    const t = performance.now();
    const c = process.cpuUsage();
    const r = await f();
    const u = process.cpuUsage(c);
    const s: Step = {
      step,
      seconds: (performance.now() - t) / 1000,
      cpuSeconds: (u.user + u.system) / 1e6,
      load: loadavg()[0]!,
      ...extra(r),
    };
    state.steps.push(s);
    save();
    log(`${step}: ${s.seconds.toFixed(1)} s (${s.cpuSeconds.toFixed(1)} CPU s, load ${s.load.toFixed(1)})`);
    return r;
  };

  const store = join(out, 'tracelake');
  if (existsSync(join(out, 'built.json'))) throw new Error(`${out} already holds a built store (built.json): remove it to rebuild`);
  if (!state.done.includes(0)) {
    if (existsSync(store)) rmSync(store, { recursive: true, force: true });
    await timed('copy 0: the template copied', async () => cpSync(join(tpl, 'tracelake'), store, { recursive: true }));
    state.done.push(0);
    save();
  }
  const base = join(work, 'base.parquet');
  if (!existsSync(base)) {
    const tmp = `${base}.part`;
    await timed(
      'export of the template (Parquet)',
      async () => {
        const s = await TraceStore.open(store);
        try {
          return await s.data.exportFile(info.projectId, tmp, { format: 'parquet', log_stream_id: info.logStreamId });
        } finally {
          await s.close();
        }
      },
      (r) => ({ records: r.rows, bytes: statSync(tmp).size }),
    );
    cpSync(tmp, base);
    rmSync(tmp);
  }

  const db = await DuckDBInstance.create(':memory:', { threads: values.threads!, memory_limit: '2GB', preserve_insertion_order: 'true' });
  const conn = await db.connect();
  const names = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${base}')`)).getRows().map((r) => String(r[0]));
  for (const c of [...ID_COLS, ...TIME_COLS]) if (!names.includes(c)) throw new Error(`the export has no column ${c}`);
  const groupRows = rowGroupRows(base);
  // The export holds the template's segments in manifest order, each its row groups: where each begins.
  const tplManifest = JSON.parse(readFileSync(join(tpl, 'tracelake', 'manifest.json'), 'utf8')) as {
    segments: { kind: string; row_groups: [number, number, number][] }[];
  };
  const parts: Part[] = [];
  let g0 = 0;
  for (const seg of tplManifest.segments) {
    const n = seg.row_groups.length;
    if (seg.row_groups.some((rg, i) => groupRows[g0 + i] !== rg[2]))
      throw new Error("the export's row groups are not the template segments' (a segment with dead rows?): cannot split it by segment");
    parts.push({ first: g0, end: g0 + n, kind: seg.kind });
    g0 += n;
  }
  if (g0 !== groupRows.length) throw new Error(`the export has ${groupRows.length} row groups, the template's segments ${g0}`);
  // The remap relies on the version nibble: every id of the template must carry '4' there.
  const odd = (
    await conn.runAndReadAll(
      `SELECT count(*) FROM read_parquet('${base}') WHERE ${ID_COLS.map((c) => `substr("${c}", 15, 1) <> '4'`).join(' OR ')}`,
    )
  ).getRows()[0]![0];
  if (Number(odd) !== 0)
    throw new Error(`${String(odd)} rows of the template have an id whose 15th character is not '4': the remap would not be one to one`);
  const span = (
    await conn.runAndReadAll(`SELECT epoch_us(max(created_at)) - epoch_us(min(created_at)) FROM read_parquet('${base}')`)
  ).getRows()[0]![0];
  if (Number(span) >= WEEK_US)
    throw new Error(`the template spans ${Number(span) / 86_400e6} days: copies a week apart would overlap in time`);

  // Every column of a copy is the export's, types included: one template file serves every splice.
  const template = join(work, 'template.parquet');
  await conn.run(
    `COPY (SELECT ${names.map((c) => remapExpr(c, 1)).join(', ')} FROM read_parquet('${base}') LIMIT 0) TO '${template}' (${OPTS})`,
  );
  // No merges while building (they would rewrite the imported segments at level 3 as they come).
  const ts = await TraceStore.open(store, { autoCompact: false, threads: Number(values.threads), memoryLimit: '3GB' });
  // The import's own batches (1M rows, ending at row groups' ends): larger ones spilled gigabytes.
  const importOne = (step: string, file: string) =>
    timed(
      step,
      async () => ts.data.importFile(file, { project: 'peers', logStream: 'bench' }),
      (r) => ({ records: r.records, bytes: statSync(file).size }),
    );
  try {
    for (let k = 1; k < COPIES; k++) {
      if (state.done.includes(k)) continue;
      const listed = join(work, `copy-${k}.json`);
      if (!existsSync(listed)) {
        const files = await timed(
          `copy ${k}: remapped side files and span parts written`,
          async () => writeCopy(db, base, names, groupRows, k, work, parts, template),
          (f) => ({ bytes: f.reduce((n, x) => n + statSync(x).size, 0) }),
        );
        writeFileSync(listed, JSON.stringify(files));
      }
      for (const file of JSON.parse(readFileSync(listed, 'utf8')) as string[]) {
        if (!existsSync(file)) continue; // imported before an interruption
        await importOne(`copy ${k}: spans ${file.slice(-11, -8)} imported`, file);
        rmSync(file);
      }
      rmSync(listed);
      state.done.push(k);
      save();
    }
    for (const [i, p] of parts.entries()) {
      if (p.kind === 'span' || state.done.includes(100 + i)) continue;
      const file = join(work, `copies-p${i}.parquet`);
      const groups: GroupSources[] = [];
      for (let k = 1; k < COPIES; k++)
        for (let g = p.first; g < p.end; g++)
          groups.push([
            { path: sidePath(work, k, g), group: 0 },
            { path: base, group: g },
          ]);
      await timed(`copies 1-9: ${p.kind}s spliced`, async () => spliceGroups(file, template, groups));
      await importOne(`copies 1-9: ${p.kind}s imported`, file);
      rmSync(file);
      state.done.push(100 + i);
      save();
    }
  } finally {
    await timed('store closed', async () => ts.close());
  }
  for (let k = 1; k < COPIES; k++) rmSync(join(work, `sides-${k}`), { recursive: true, force: true });
  conn.closeSync();
  rmSync(base, { force: true });

  const loaded = (info.loaded ?? info.spans) * COPIES;
  const built: TemplateInfo & Record<string, unknown> = {
    spans: 100_000_000,
    loaded,
    seed: info.seed,
    batchSpans: info.batchSpans,
    // Not a hash of loaded ids (nothing was loaded span by span): the template's, tied to the copy scheme.
    fingerprint: createHash('sha256')
      .update(`${info.fingerprint}:copies=${COPIES}:digits=${COPY_DIGITS.join('')}:shift=${WEEK_US}`)
      .digest('hex')
      .slice(0, 16),
    projectId: info.projectId,
    logStreamId: info.logStreamId,
    loadSeconds: state.steps.reduce((n, s) => n + s.seconds, 0),
    builtAt: new Date().toISOString(),
    open: OPEN_OPTIONS,
    derivedFrom: {
      template: tpl,
      fingerprint: info.fingerprint,
      copies: COPIES,
      copyDigits: COPY_DIGITS,
      shiftUs: WEEK_US,
      how: 'bench/build-100m.ts',
    },
    steps: state.steps,
    cpus: cpus().length,
  };
  writeFileSync(join(out, 'built.json'), `${JSON.stringify(built, null, 2)}\n`);
  log(`built ${loaded} spans in ${out}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
