// A merged segment's top lists made from its inputs' lists instead of its rows. A merge writes its
// inputs' rows one input after another, less the rows it drops (text-merge.ts relies on the same), so
// an input row's number in the merged file is its input's offset plus its own number, less the dropped
// rows before it. Each merged list is the best of the union of the inputs' lists by (value, id).
// That union holds the merged segment's true best rows unless an input's list was cut short (it keeps
// depth + 1 rows of a larger segment) and every one of its surviving rows made the cut: its next,
// unlisted row might belong too, and the lists are then built from the rows as before. Building from
// the rows costs ~3 µs a row at every merge of 65,536 rows or more (bench/probes/seal-steps.ts
// --merge); this reads the inputs' lists and the merged file's seq column.
// Checked, not assumed: every listed row's seq must be the merged file's seq at its new number.
import type { Connection } from '../../db/database.js';
import { ident, int, joinSql, raw, sql, type Sql } from '../../query/sql.js';
import type { MergedFrom } from './text-merge.js';
import { listNumber, TOP_LIST_COLUMNS, TOP_LIST_FILTER_COLUMNS, topListsPath, writeListsFile } from './top-lists.js';

/** The columns a lists file stores, in its order (as writeTopLists writes them; `c` is created_at). */
function storedColumns(metrics: readonly number[]): string[] {
  const file = TOP_LIST_COLUMNS.filter((c) => c !== 'project_id' && c !== 'run_id').map((c) => (c === 'created_at' ? 'c' : c));
  return [...file, ...TOP_LIST_FILTER_COLUMNS, ...metrics.map((m) => `m${m}`)];
}

/**
 * Writes the lists of the merged segment at `abs` (`depth` rows each, plus one when cut short) from its
 * inputs' lists; false when they cannot give them (an input without lists in the current format, a
 * list cut too short, rows not where the merge should have put them): the caller builds them from
 * the rows then.
 */
export async function writeMergedTopLists(
  conn: Connection,
  abs: string,
  from: MergedFrom,
  metrics: readonly number[],
  depth: number,
): Promise<boolean> {
  if (metrics.length === 0 || from.inputs.some((x) => x.topListRows === undefined)) return false;
  const ids = metrics.map((m) => Math.trunc(m));
  // Rows are numbered across the inputs in order (g: the input's offset plus the row's number in it);
  // a listed row's number in the merged file is its g less the dropped rows before it (d, usually none).
  const dropped = [...from.dropped];
  const offsets: number[] = [];
  let offset = 0;
  for (const x of from.inputs) {
    offsets.push(offset);
    offset += x.rowGroups.reduce((a, b) => a + b, 0);
  }
  const parts = from.inputs.map(
    (x, i) =>
      sql`SELECT ${int(i)} AS i, ${int(offsets[i]!)}::BIGINT AS off, ${int(x.topListRows!)} AS depth, * FROM read_parquet(${topListsPath(x.abs)}, hive_partitioning = false)`,
  );
  const droppedRows =
    dropped.length === 0
      ? sql`SELECT NULL::BIGINT AS g WHERE false`
      : joinSql(
          from.inputs.map(
            (x, i) =>
              sql`SELECT ${int(offsets[i]!)}::BIGINT + file_row_number AS g FROM read_parquet(${x.abs}, hive_partitioning = false, file_row_number = true)
                  WHERE seq IN (SELECT unnest(${dropped}::BIGINT[]))`,
          ),
          ' UNION ALL ',
        );
  const lists = ids.flatMap((m) => [false, true].map((ascending) => ({ m, ascending, no: listNumber(m, ascending) })));
  const ranked = lists.map(({ m, ascending, no }) => {
    const d = raw(ascending ? 'ASC' : 'DESC');
    const col = ident(`m${m}`);
    return sql`SELECT *, (row_number() OVER (ORDER BY ${col} ${d}, id ${d}))::SMALLINT AS new_rank
      FROM (SELECT * FROM s WHERE list = ${int(no)} ORDER BY ${col} ${d}, id ${d} LIMIT ${int(depth + 1)})`;
  });
  const cte = sql`WITH u AS (${joinSql(parts, ' UNION ALL BY NAME ')}),
      n AS (SELECT list, i, count(*) AS listed, any_value(depth) AS depth FROM u GROUP BY ALL),
      d AS (SELECT g, row_number() OVER (ORDER BY g) AS before FROM (${droppedRows})),
      ug AS (SELECT u.*, u.off + u.r AS g FROM u WHERE u.seq NOT IN (SELECT unnest(${dropped}::BIGINT[]))),
      s AS (SELECT ug.* EXCLUDE (g), ug.g - coalesce(d.before, 0) AS nr FROM ug ASOF LEFT JOIN d ON ug.g > d.g),
      k AS (${joinSql(ranked, ' UNION ALL ')}),
      f AS (SELECT file_row_number AS nr, seq AS fseq, has_children AS fhc FROM read_parquet(${abs}, hive_partitioning = false, file_row_number = true)
            WHERE file_row_number IN (SELECT nr FROM k))`;
  // Refused: a row whose seq is not the merged file's at its number; an input list cut short (it held
  // depth + 1 rows) whose every surviving row was kept.
  const [check] = await conn.all(
    sql`${cte},
      misplaced AS (SELECT count(*) AS x FROM k LEFT JOIN f USING (nr) WHERE f.fseq IS DISTINCT FROM k.seq),
      kept AS (SELECT list, i, count(*) AS kept FROM k GROUP BY ALL),
      alive AS (SELECT list, i, count(*) AS alive FROM s GROUP BY ALL),
      short AS (SELECT count(*) AS x FROM n LEFT JOIN alive USING (list, i) LEFT JOIN kept USING (list, i)
                WHERE n.listed > n.depth AND coalesce(kept.kept, 0) >= coalesce(alive.alive, 0))
      SELECT (SELECT x FROM misplaced) AS misplaced, (SELECT x FROM short) AS short`,
  );
  if (Number(check?.['misplaced']) !== 0 || Number(check?.['short']) !== 0) return false;
  // has_children from the merged file: the merge wrote the manifest's overrides into it.
  const cols = storedColumns(ids).map((c) => (c === 'has_children' ? raw('f.fhc AS has_children') : sql`k.${ident(c)}`));
  await writeListsFile(
    conn,
    abs,
    depth,
    sql`${cte} SELECT k.list::SMALLINT AS list, k.new_rank AS rank, ${joinSql(cols)}, k.nr AS r FROM k JOIN f USING (nr) ORDER BY list, rank`,
  );
  return true;
}
