// The reads a page may need after its keys: its rows' columns by seq (when the keys query did not
// carry them), the roll-ups of its records' metrics from their descendants, and their child counts.
// Each reads only what the page's records can need: the created_at span of the page, the traces of
// its records, their ids.
import type { Row, SqlRunner } from '../../db/database.js';
import type { Level, RollUpMethod } from '../columns.js';
import { fetchQuery, locatedFetchQuery } from '../plan.js';
import { ident, sql } from '../sql.js';
import type { RecordKind } from '../../record/record-columns.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { pageRollUpsQuery } from './page-rollups.js';
import { addRolled } from './page-rows.js';
import { DESCENDANTS, KINDS, scopeOf, type RunScope } from './plan-input.js';
import type { PageKey } from './page-keys.js';

/** The page's rows by seq, in the order of the keys. */
export async function fetchRows(
  db: SqlRunner,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  columns: readonly string[] | '*',
  keys: readonly { seq: number; c: number }[],
): Promise<Row[]> {
  if (keys.length === 0) return [];
  let lo = Infinity;
  let hi = -Infinity;
  for (const k of keys) {
    lo = Math.min(lo, k.c);
    hi = Math.max(hi, k.c);
  }
  const withSeq = columns === '*' ? columns : [...new Set([...columns, 'seq'])];
  // Only the segments and memory tables whose rows may lie within the page's created_at span are
  // listed (each listed file costs DuckDB its metadata, each memory table a scan).
  const q = fetchQuery(
    snap.source(scopeOf(scope, KINDS[level]), [], [], [[lo, hi]]),
    withSeq,
    keys.map((k) => k.seq),
    [lo, hi],
  );
  const rows = await db.all(q);
  const bySeq = new Map(rows.map((r) => [Number(r['seq']), r]));
  return keys.map((k) => bySeq.get(k.seq)).filter((r): r is Row => r !== undefined);
}

/**
 * The page's rows from where the keys query found them (a keys query with `locate`: a stored row's
 * loc_file and loc_row, a memory row's seq), in the order of the keys: one read per segment file of the
 * row groups holding its rows (run side by side), and the rows in memory by seq. Columns of `carried`
 * are taken from the keys' rows, not read.
 */
export async function fetchLocated(
  db: SqlRunner,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  wanted: readonly string[],
  keys: readonly PageKey[],
  carried: readonly string[] = [],
): Promise<Row[]> {
  const columns = wanted.filter((c) => !carried.includes(c));
  const byFile = new Map<string, number[]>();
  const inMemory: { seq: number; c: number }[] = [];
  for (const k of keys) {
    const file = k.row['loc_file'];
    const at = k.row['loc_row'];
    if (typeof file === 'string' && at !== null && at !== undefined) byFile.set(file, [...(byFile.get(file) ?? []), Number(at)]);
    else if (k.seq !== null) inMemory.push({ seq: k.seq, c: k.c });
    else throw new Error('internal: a located key without its file or its seq');
  }
  const found = new Map<string, Row>();
  const stored = [...byFile].map(async ([file, rows]) => {
    for (const r of await db.all(locatedFetchQuery(file, columns, rows))) found.set(placeOf(file, r['loc_row']), r);
  });
  const memory = async () => {
    if (inMemory.length === 0) return;
    for (const r of await fetchMemory(db, snap, level, scope, columns, inMemory)) found.set(String(r['seq']), r);
  };
  await Promise.all([...stored, memory()]);
  const rows: Row[] = [];
  for (const k of keys) {
    const file = k.row['loc_file'];
    const r = typeof file === 'string' ? found.get(placeOf(file, k.row['loc_row'])) : found.get(String(k.seq));
    if (r === undefined) continue;
    for (const c of carried) r[c] = k.row[c];
    rows.push(r);
  }
  return rows;
}

const placeOf = (file: string, row: unknown) => `${file}\n${Number(row)}`;

/** Rows still in memory by seq (no segment read). */
function fetchMemory(
  db: SqlRunner,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  columns: readonly string[],
  keys: readonly { seq: number; c: number }[],
): Promise<Row[]> {
  const src = snap.source(scopeOf(scope, KINDS[level]), [], [], null, { files: new Set(), only: true, memory: true });
  return db.all(
    fetchQuery(
      src,
      [...new Set([...columns, 'seq'])],
      keys.map((k) => k.seq),
      null,
    ),
  );
}

/**
 * Roll-ups of the metrics `metrics` (null: every metric) for the page's records that can have any
 * (`ids`, of traces `traces`), from their descendants; own values win later. id -> name -> value.
 */
export async function pageRollUps(
  db: SqlRunner,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  ids: string[],
  traces: string[],
  metrics: readonly string[] | null,
  rollUp: (name: string) => RollUpMethod,
): Promise<Map<string, Map<string, number>>> {
  const s = { projectId: scope.projectId, ...(scope.runId !== undefined ? { runId: scope.runId } : {}) };
  const rows = await db.all(pageRollUpsQuery(snap, level, s, DESCENDANTS[level], ids, traces, metrics));
  const out = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const name = String(r['name']);
    const v = r[rollUp(name)];
    if (v === null || v === undefined) continue;
    addRolled(out, String(r['id']), name, v);
  }
  return out;
}

/** Spans per trace, or traces per session, for the page's records. */
export async function childCounts(
  db: SqlRunner,
  snap: Snapshot,
  level: Level,
  scope: RunScope,
  page: readonly Row[],
): Promise<Map<string, number>> {
  const kind: RecordKind = level === 'trace' ? 'span' : 'trace';
  const link = ident(level === 'trace' ? 'trace_id' : 'session_id');
  const src = snap.source(scopeOf(scope, [kind]));
  const ids = page.map((r) => String(r['id']));
  const rows = await db.all(
    sql`SELECT ${link} AS id, count(*) AS n FROM ${src.sql} WHERE list_contains(${ids}::VARCHAR[], ${link}) GROUP BY 1`,
  );
  return new Map(rows.map((r) => [String(r['id']), Number(r['n'])]));
}
