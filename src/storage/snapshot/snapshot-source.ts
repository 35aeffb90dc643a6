// A snapshot's SQL source (read_parquet, memory tables, dead-row and retention filters), apart from what snapshot.ts picks to read.
import { join } from 'node:path';
import { EMPTY, ident, joinSql, raw, sql, type Sql } from '../../query/sql.js';
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
  /** The live rows, as a parenthesized subquery with its parameters. */
  readonly sql: Sql;
  /** Column (in the source's output) holding a requested metric's value. */
  metricColumn(name: string): string;
}

const COLS = COLUMN_NAMES.join(', ');
const union = (parts: readonly Sql[]) => joinSql(parts, ' UNION ALL ');

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
  readonly deadSeqs: Sql;
  /** Snapshot.deadSeqsIn: the dead seqs within one seq range. */
  deadSeqsIn(lo: number, hi: number): Sql;
  readonly memBound: Sql;
  readonly star: Sql;
  /** Runs whose records expire, with their cutoffs (Snapshot.cutoffs). */
  readonly cutoffs: ReadonlyMap<string, number>;
  /** Only the expired rows (to purge them), not the live ones. */
  readonly expiredOnly: boolean;
  /** The sealed part given as a SELECT (Snapshot.sourceWith), instead of the segments, with segments read whole beside it. */
  readonly given?: { columns: readonly string[]; segments: Sql; whole: readonly SegmentEntry[] } | undefined;
  /**
   * Whether each row also carries where it is: loc_file and loc_row (its file_row_number) when stored,
   * else loc_seq and loc_created (its seq and created_at, NULL for stored rows).
   */
  readonly locate?: boolean;
}

export function sourceSql(from: SourceParts, metrics: readonly string[]): SourceSql {
  const { dir, scope, mem, deadFree, expiredOnly, given } = from;
  const { whole, partial } = from.segments;
  const aliases = new Map<string, string>(metrics.map((name, i) => [name, `mx${i}`]));
  const alias = (i: number) => ident(`mx${i}`);
  // A metric column exists only in files that stored it; union_by_name fills it for the others of
  // one read, so a read of files none of which has it must select NULL instead.
  const segCols = (segs: readonly SegmentEntry[]) =>
    metrics.map((name, i) => {
      const id = from.metricIds[name];
      return id !== undefined && segs.some((s) => s.metrics.includes(id))
        ? sql`${ident(`m${id}`)} AS ${alias(i)}`
        : sql`NULL::DOUBLE AS ${alias(i)}`;
    });
  const locate = from.locate === true;
  // A stored row is located by its file and row number there, a row in memory by its seq (loc_seq, with
  // loc_created): a stored row's seq and created_at are then not read (they come with its fetch). With
  // given parts (top lists' rows, which carry their seq and their place in their segment, given with
  // their own loc columns) every row keeps its seq: a page may be fetched by seq as well.
  const storedSeq = given ? 'seq AS loc_seq, created_at AS loc_created' : 'NULL::BIGINT AS loc_seq, NULL::TIMESTAMP AS loc_created';
  const extra = (list: Sql[], stored = true) => {
    const all = locate
      ? [
          ...list,
          raw(
            stored
              ? `file_row_number AS loc_row, filename AS loc_file, ${storedSeq}`
              : 'NULL::BIGINT AS loc_row, NULL::VARCHAR AS loc_file, seq AS loc_seq, created_at AS loc_created',
          ),
        ]
      : list;
    return all.length > 0 ? sql`, ${joinSql(all)}` : EMPTY;
  };
  /**
   * Each part, whether it is read without the dead-row filter (segments and memory tables without dead
   * rows), and the seq range its segments' rows lie in: only the dead seqs there can match them, so a
   * read of few segments tests a small part of a large delete's marks.
   */
  const parts: { q: Sql; clean: boolean; seqs?: readonly [number, number] }[] = [];
  const seqsOf = (segs: readonly SegmentEntry[]) =>
    [Math.min(...segs.map((g) => g.min_seq)), Math.max(...segs.map((g) => g.max_seq))] as const;
  // tag_set where segments store it, else tag_list (record-columns.ts): a filter reads one per row.
  const stored = raw(`${COLS}, ${TAG_SET_COLUMN}, NULL::VARCHAR[] AS ${TAG_LIST_COLUMN}`);
  const derived = raw(`${COLS}, NULL::VARCHAR AS ${TAG_SET_COLUMN}, tags AS ${TAG_LIST_COLUMN}`);
  const colsOf = (seg: SegmentEntry) => (seg.tag_set === true ? stored : derived);
  // Given columns as the other parts (small segments, memory tables) give them: tags always as tag_list.
  const givenCol = (c: string) =>
    c === TAG_SET_COLUMN ? `NULL::VARCHAR AS ${TAG_SET_COLUMN}` : c === TAG_LIST_COLUMN ? `tags AS ${TAG_LIST_COLUMN}` : c;
  const cols = given ? raw(given.columns.map(givenCol).join(', ')) : derived;
  if (given) {
    parts.push({ q: given.segments, clean: false });
    if (given.whole.length > 0) {
      const files = given.whole.map((s) => join(dir, s.file));
      parts.push({
        q: sql`SELECT ${cols}${extra(segCols(given.whole))} FROM read_parquet(${files}, hive_partitioning = false, union_by_name = true)`,
        clean: false,
        seqs: seqsOf(given.whole),
      });
    }
  } else {
    for (const withTags of [true, false]) {
      for (const free of deadFree ? [true, false] : [false]) {
        const some = whole.filter((s) => (s.tag_set === true) === withTags && (deadFree === null || deadFree.has(s.file) === free));
        if (some.length === 0) continue;
        const files = some.map((s) => join(dir, s.file));
        parts.push({
          q: sql`SELECT ${withTags ? stored : derived}${extra(segCols(some))} FROM read_parquet(${files}, hive_partitioning = false, union_by_name = true)`,
          clean: free,
          seqs: seqsOf(some),
        });
      }
    }
    // Segments the text index narrows to some row groups: one read each, on file_row_number ranges
    // (DuckDB skips the row groups outside them).
    for (const { seg, ranges } of partial) {
      const where = joinSql(
        ranges.map(([a, b]) => sql`file_row_number BETWEEN ${a} AND ${b}`),
        ' OR ',
      );
      parts.push({
        q: sql`SELECT ${colsOf(seg)}${extra(segCols([seg]))} FROM read_parquet(${join(dir, seg.file)}, hive_partitioning = false) WHERE ${where}`,
        clean: deadFree?.has(seg.file) === true,
        seqs: seqsOf([seg]),
      });
    }
  }
  if (mem.length > 0) {
    // One fragment for every table: its values are bound once.
    const memCols = extra(
      metrics.map((name, i) => sql`metrics[${name}] AS ${alias(i)}`),
      false,
    );
    const where = [sql`project_id = ${scope.projectId}`, from.memBound];
    if (scope.runId !== undefined) where.push(sql`run_id = ${scope.runId}`);
    if (scope.kinds.length < 3) where.push(sql`${raw(KIND_SQL)} IN (SELECT unnest(${[...scope.kinds]}::VARCHAR[]))`);
    const test = joinSql(where, ' AND ');
    for (const t of mem)
      parts.push({ q: sql`SELECT ${cols}${memCols} FROM ${ident(t.name)} WHERE ${test}`, clean: deadFree !== null && from.memDeadFree(t) });
  }
  // An empty scope still needs the columns (a query over it answers nothing).
  if (parts.length === 0)
    parts.push({
      q: sql`SELECT ${cols}${extra(
        metrics.map((_, i) => sql`NULL::DOUBLE AS ${alias(i)}`),
        false,
      )} FROM ${ident(EMPTY_TABLE)}`,
      clean: false,
    });
  const expired = [...from.cutoffs].map(([run, us]) => sql`(run_id = ${run} AND created_at < make_timestamp(${us}))`);
  const live = expired.length === 0 ? EMPTY : sql` AND ${raw(expiredOnly ? '' : 'NOT ')}(${joinSql(expired, ' OR ')})`;
  // With dead-free segments, only the other parts are filtered (their seq column is not even read).
  const deadOf = (x: (typeof parts)[number]) => (x.seqs ? from.deadSeqsIn(...x.seqs) : from.deadSeqs);
  const q =
    deadFree === null
      ? sql`(SELECT ${from.star} FROM (${union(parts.map((x) => x.q))}) WHERE seq NOT IN ${from.deadSeqs}${live})`
      : sql`(SELECT ${from.star}
          FROM (${union(parts.map((x) => (x.clean ? x.q : sql`SELECT * FROM (${x.q}) WHERE seq NOT IN ${deadOf(x)}`)))}) WHERE true${live})`;
  return {
    sql: q,
    metricColumn: (name) => {
      const a = aliases.get(name);
      if (!a) throw new Error(`metric ${name} was not requested from the source`);
      return a;
    },
  };
}
