// A span segment's type facts (manifest.ts TypeFacts), measured from the written file in one GROUP BY
// over narrow columns when the segment is written. The planner used to learn them with the same scan
// on the first question after every open (the whole store's spans read once); kept in the manifest
// entry, a fresh store answers its first question without it. A segment written before this, or whose
// facts cannot be measured, has none: the planner then scans it as before.
import type { Connection } from '../../db/database.js';
import { ident, joinSql, sql } from '../../query/sql.js';
import type { TypeFacts } from '../manifest/manifest.js';

/** The facts of a span segment at `abs` for `columns` (stored column names), or undefined when they cannot be read. */
export async function measureTypeFacts(conn: Connection, abs: string, columns: readonly string[]): Promise<TypeFacts | undefined> {
  try {
    const present = new Set(await conn.columnNames(sql`SELECT * FROM read_parquet(${abs}, hive_partitioning = false)`));
    const checked = columns.filter((c) => present.has(c));
    if (!present.has('type') || !present.has('has_children')) return undefined;
    const sets = joinSql(
      checked.map((c, i) => sql`, bool_or(${ident(c)} IS NOT NULL) AS ${ident(`k${i}`)}`),
      '',
    );
    const rows = await conn.all(
      sql`SELECT type, bool_or(has_children) AS hc${sets} FROM read_parquet(${abs}, hive_partitioning = false) GROUP BY type`,
    );
    const types: Record<string, { children: boolean; set: string[] }> = {};
    for (const r of rows) {
      // A NULL type is not a span type any filter names; the facts then cannot describe the file.
      if (typeof r['type'] !== 'string') return undefined;
      types[r['type']] = { children: r['hc'] === true, set: checked.filter((_, i) => r[`k${i}`] === true) };
    }
    return { checked, types };
  } catch {
    return undefined;
  }
}
