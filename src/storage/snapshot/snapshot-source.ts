// A snapshot's SQL source (read_parquet, memory tables, dead-row and retention filters), apart from what snapshot.ts picks to read.
import { join } from 'node:path';
import type { Param } from '../../db/database.js';
import type { SegmentEntry } from '../manifest/manifest.js';
import type { MemTable } from '../memtable/mem-tables.js';
import { COLUMN_NAMES, KIND_SQL, TAG_LIST_COLUMN, TAG_SET_COLUMN } from '../../record/record-columns.js';
import type { Scope } from './scope.js';
import type { TextCandidates } from './time-profile.js';

/** Part of a scope's records: only the segments in `files` (only: true) or all but those, memory tables or not. */
export interface SourcePick {
  readonly files: ReadonlySet<string>;
  readonly only: boolean;
  readonly memory: boolean;
}

export interface SourceSql {
  readonly sql: string;
  readonly params: Param[];
  /** Column (in the source's output) holding a requested metric's value. */
  metricColumn(name: string): string;
}

const COLS = COLUMN_NAMES.join(', ');

/** A table that stays empty: the source of a scope with no rows anywhere. */
export const EMPTY_TABLE = 'mem_empty';

/** What a snapshot chose for one source (Snapshot.source), and its own bounds as SQL. */
export interface SourceParts {
  readonly dir: string;
  readonly scope: Scope;
  /** Metric name -> id of the shredded `m<id>` columns in segments. */
  readonly metricIds: Readonly<Record<string, number>>;
  readonly segments: TextCandidates;
  readonly mem: readonly MemTable[];
  /** Segments read without the dead-row filter (Snapshot.deadFreeFiles); null: every part is filtered. */
  readonly deadFree: ReadonlySet<string> | null;
  /** Whether a memory table holds no dead row (then it is read without the filter too). */
  memDeadFree(t: MemTable): boolean;
  /** Snapshot.deadSeqs, Snapshot.memBound, and its `SELECT *` (has_children overridden or not). */
  readonly deadSeqs: string;
  readonly memBound: string;
  readonly star: string;
  /** Runs whose records expire, with their cutoffs (Snapshot.cutoffs). */
  readonly cutoffs: ReadonlyMap<string, number>;
  /** Only the expired rows (to purge them), not the live ones. */
  readonly expiredOnly: boolean;
  /** The sealed part given as a SELECT (Snapshot.sourceWith), instead of the segments. */
  readonly given?: { columns: readonly string[]; segments: (p: (v: Param) => string) => string } | undefined;
}

export function sourceSql(from: SourceParts, firstParam: number, metrics: readonly string[]): SourceSql {
  const { dir, scope, mem, deadFree, expiredOnly, given } = from;
  const { whole, partial } = from.segments;
  const params: Param[] = [];
  const p = (v: Param) => {
    params.push(v);
    return `$${firstParam + params.length - 1}`;
  };
  const aliases = new Map<string, string>(metrics.map((name, i) => [name, `mx${i}`]));
  // A metric column exists only in files that stored it; union_by_name fills it for the others of
  // one read, so a read of files none of which has it must select NULL instead.
  const segCols = (segs: readonly SegmentEntry[]) =>
    metrics.map((name, i) => {
      const id = from.metricIds[name];
      return id !== undefined && segs.some((s) => s.metrics.includes(id)) ? `m${id} AS mx${i}` : `NULL::DOUBLE AS mx${i}`;
    });
  const extra = (list: string[]) => (list.length > 0 ? `, ${list.join(', ')}` : '');
  const parts: string[] = [];
  /** Parts read without the dead-row filter (segments and memory tables without dead rows). */
  const clean = new Set<string>();
  // tag_set where segments store it, else tag_list (record-columns.ts): a filter reads one per row.
  const stored = `${COLS}, ${TAG_SET_COLUMN}, NULL::VARCHAR[] AS ${TAG_LIST_COLUMN}`;
  const derived = `${COLS}, NULL::VARCHAR AS ${TAG_SET_COLUMN}, tags AS ${TAG_LIST_COLUMN}`;
  const colsOf = (seg: SegmentEntry) => (seg.tag_set === true ? stored : derived);
  const cols = given ? given.columns.join(', ') : derived;
  if (given) parts.push(given.segments(p));
  else {
    for (const withTags of [true, false]) {
      for (const free of deadFree ? [true, false] : [false]) {
        const some = whole.filter((s) => (s.tag_set === true) === withTags && (deadFree === null || deadFree.has(s.file) === free));
        if (some.length === 0) continue;
        const files = some.map((s) => join(dir, s.file));
        parts.push(`SELECT ${withTags ? stored : derived}${extra(segCols(some))} FROM read_parquet(${p(files)}, hive_partitioning = false, union_by_name = true)`);
        if (free) clean.add(parts[parts.length - 1]!);
      }
    }
    // Segments the text index narrows to some row groups: one read each, on file_row_number ranges
    // (DuckDB skips the row groups outside them).
    for (const { seg, ranges } of partial) {
      const where = ranges.map(([a, b]) => `file_row_number BETWEEN ${p(a)} AND ${p(b)}`).join(' OR ');
      parts.push(`SELECT ${colsOf(seg)}${extra(segCols([seg]))} FROM read_parquet(${p(join(dir, seg.file))}, hive_partitioning = false) WHERE ${where}`);
      if (deadFree?.has(seg.file)) clean.add(parts[parts.length - 1]!);
    }
  }
  if (mem.length > 0) {
    // Parameters are numbered in order of appearance: none may be bound that the SQL does not use.
    const memCols = metrics.map((name, i) => `metrics[${p(name)}] AS mx${i}`);
    const where = [`project_id = ${p(scope.projectId)}`, from.memBound];
    if (scope.runId !== undefined) where.push(`run_id = ${p(scope.runId)}`);
    if (scope.kinds.length < 3) where.push(`${KIND_SQL} IN (SELECT unnest(${p([...scope.kinds])}::VARCHAR[]))`);
    for (const t of mem) {
      parts.push(`SELECT ${cols}${extra(memCols)} FROM ${t.name} WHERE ${where.join(' AND ')}`);
      if (deadFree !== null && from.memDeadFree(t)) clean.add(parts[parts.length - 1]!);
    }
  }
  // An empty scope still needs the columns (a query over it answers nothing).
  if (parts.length === 0) parts.push(`SELECT ${cols}${extra(metrics.map((_, i) => `NULL::DOUBLE AS mx${i}`))} FROM ${EMPTY_TABLE}`);
  const expired = [...from.cutoffs].map(([run, us]) => `(run_id = ${p(run)} AND created_at < make_timestamp(${p(us)}))`);
  const live = expired.length === 0 ? '' : expiredOnly ? ` AND (${expired.join(' OR ')})` : ` AND NOT (${expired.join(' OR ')})`;
  // With dead-free segments, only the other parts are filtered (their seq column is not even read).
  const sql =
    deadFree === null
      ? `(SELECT ${from.star} FROM (${parts.join(' UNION ALL ')}) WHERE seq NOT IN ${from.deadSeqs}${live})`
      : `(SELECT ${from.star} FROM (${parts.map((x) => (clean.has(x) ? x : `SELECT * FROM (${x}) WHERE seq NOT IN ${from.deadSeqs}`)).join(' UNION ALL ')}) WHERE true${live})`;
  return {
    sql,
    params,
    metricColumn: (name) => {
      const a = aliases.get(name);
      if (!a) throw new Error(`metric ${name} was not requested from the source`);
      return a;
    },
  };
}
