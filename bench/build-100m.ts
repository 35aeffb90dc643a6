// A 100M-span store for the peer benchmark (issue 17, item 5), built from the 10M template in minutes
// instead of hours through the library: the template is copied as it is (copy 0), exported once as
// Parquet (page-copying export), and nine disjoint copies of that export are derived with DuckDB and
// imported (the direct import path; page-copying where a row group holds one kind).
//
// Copy k (1..9) differs from the template only in
// - every id (id, trace_id, parent_id, session_id, previous_session_id): the version nibble of the
//   generator's v4 UUIDs (character 15, always '4' in the template: checked) becomes COPY_DIGITS[k-1],
//   never '4'; so ids of different copies never collide, within a copy the mapping is one to one, and
//   each copy's trees and sessions link exactly as the template's do;
// - created_at and updated_at: shifted by k weeks. The template spans 6.8 days, so copies are disjoint
//   in time and copy 9 is the newest: a newest-first page at 100M is copy 9's version of the 10M page,
//   and every count is exactly 10x the template's (check-100m.ts verifies both).
//
// Resumable: state.json in the work folder records the copies imported (a copy interrupted mid-import
// is imported again: an import of the same rows twice is an import once).
//   node --import tsx bench/build-100m.ts [--template /work/data-10m] [--out /work/data-100m] [--work /work/h23-tmp]
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { TraceStore } from '../src/engine/trace-store.js';
import type { TemplateInfo } from './peers/store-template.js';

export const COPIES = 10;
/** The version nibble of copy k's ids (copy 0 keeps the template's '4'). */
export const COPY_DIGITS = ['0', '1', '2', '3', '5', '6', '7', '8', '9'] as const;
export const WEEK_US = 7 * 86_400 * 1_000_000;
const ID_COLS = ['id', 'session_id', 'trace_id', 'parent_id', 'previous_session_id'];
const TIME_COLS = ['created_at', 'updated_at'];

/** SQL (DuckDB) for copy k's value of a column, or the column itself. Column names are the export's own. */
export function remapExpr(col: string, k: number): string {
  const q = `"${col}"`;
  if (k === 0) return q;
  if (ID_COLS.includes(col)) return `substr(${q}, 1, 14) || '${COPY_DIGITS[k - 1]}' || substr(${q}, 16) AS ${q}`;
  if (TIME_COLS.includes(col)) return `${q} + to_microseconds(${k * WEEK_US}::BIGINT) AS ${q}`;
  return q;
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
  const state = existsSync(stateFile) ? (JSON.parse(readFileSync(stateFile, 'utf8')) as { done: number[]; steps: Step[] }) : { done: [] as number[], steps: [] as Step[] };
  const save = () => writeFileSync(stateFile, `${JSON.stringify(state, null, 2)}\n`);
  const info = JSON.parse(readFileSync(join(tpl, 'built.json'), 'utf8')) as TemplateInfo;
  const log = (s: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${s}\n`);
  const timed = async <T>(step: string, f: () => Promise<T>, extra: (r: T) => Partial<Step> = () => ({})): Promise<T> => {
    const t = performance.now();
    const c = process.cpuUsage();
    const r = await f();
    const u = process.cpuUsage(c);
    const s: Step = { step, seconds: (performance.now() - t) / 1000, cpuSeconds: (u.user + u.system) / 1e6, load: loadavg()[0]!, ...extra(r) };
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
          return await s.exportFile(info.projectId, tmp, { format: 'parquet', log_stream_id: info.logStreamId });
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
  // The remap relies on the version nibble: every id of the template must carry '4' there.
  const odd = (await conn.runAndReadAll(`SELECT count(*) FROM read_parquet('${base}') WHERE ${ID_COLS.map((c) => `substr("${c}", 15, 1) <> '4'`).join(' OR ')}`)).getRows()[0]![0];
  if (Number(odd) !== 0) throw new Error(`${String(odd)} rows of the template have an id whose 15th character is not '4': the remap would not be one to one`);
  const span = (await conn.runAndReadAll(`SELECT epoch_us(max(created_at)) - epoch_us(min(created_at)) FROM read_parquet('${base}')`)).getRows()[0]![0];
  if (Number(span) >= WEEK_US) throw new Error(`the template spans ${Number(span) / 86_400e6} days: copies a week apart would overlap in time`);

  const ts = await TraceStore.open(store);
  try {
    for (let k = 1; k < COPIES; k++) {
      if (state.done.includes(k)) continue;
      const file = join(work, `copy-${k}.parquet`);
      if (!existsSync(file)) {
        const part = `${file}.part`;
        await timed(
          `copy ${k}: remapped export written`,
          // Written in the export's order, so the import finds the rows nearly in created_at order and
          // copies the row groups that hold one kind.
          async () => conn.run(`COPY (SELECT ${names.map((c) => remapExpr(c, k)).join(', ')} FROM read_parquet('${base}')) TO '${part}' (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1, ROW_GROUP_SIZE 32768)`),
          () => ({ bytes: statSync(part).size }),
        );
        cpSync(part, file);
        rmSync(part);
      }
      await timed(`copy ${k}: imported`, async () => ts.importFile(file, { project: 'peers', logStream: 'bench' }), (r) => ({ records: r.records }));
      rmSync(file);
      state.done.push(k);
      save();
    }
  } finally {
    await timed('store closed', async () => ts.close());
  }
  conn.closeSync();
  rmSync(base, { force: true });

  const loaded = (info.loaded ?? info.spans) * COPIES;
  const built: TemplateInfo & Record<string, unknown> = {
    spans: 100_000_000,
    loaded,
    seed: info.seed,
    batchSpans: info.batchSpans,
    // Not a hash of loaded ids (nothing was loaded span by span): the template's, tied to the copy scheme.
    fingerprint: createHash('sha256').update(`${info.fingerprint}:copies=${COPIES}:digits=${COPY_DIGITS.join('')}:shift=${WEEK_US}`).digest('hex').slice(0, 16),
    projectId: info.projectId,
    logStreamId: info.logStreamId,
    loadSeconds: state.steps.reduce((n, s) => n + s.seconds, 0),
    builtAt: new Date().toISOString(),
    derivedFrom: { template: tpl, fingerprint: info.fingerprint, copies: COPIES, copyDigits: COPY_DIGITS, shiftUs: WEEK_US, how: 'bench/build-100m.ts' },
    steps: state.steps,
    cpus: cpus().length,
  };
  writeFileSync(join(out, 'built.json'), `${JSON.stringify(built, null, 2)}\n`);
  log(`built ${loaded} spans in ${out}`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
