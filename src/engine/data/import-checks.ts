// What both import paths (rows through the log, import.ts; straight into segments, import-direct.ts)
// check an export file against: its columns and their types, ids as UUIDs, known record types.
import type { Database } from '../../db/database.js';
import { sql, type Sql } from '../../query/sql.js';
import { InvalidRequestError } from '../../errors.js';
import { ALL_KINDS } from '../../query/columns.js';
import { RECORD_COLUMNS } from '../../record/record-columns.js';

export const TYPE: Record<string, string> = Object.fromEntries(RECORD_COLUMNS.map((c) => [c.name, c.type]));
export const ID_COLUMNS = new Set(['id', 'session_id', 'trace_id', 'parent_id', 'previous_session_id']);
export const UUID = "'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'";
export const VALID_TYPES = `[${ALL_KINDS.map((k) => `'${k}'`).join(', ')}]`;

export const bad = (msg: string) => new InvalidRequestError([{ loc: ['file'], msg, type: 'value_error' }]);

/** The columns DuckDB finds in `from` (an export file): refused unless it has an id, a type and a created_at. */
export async function exportColumnsOf(db: Database, from: Sql, path: string, format: string): Promise<Set<string>> {
  let present: Set<string>;
  try {
    present = new Set((await db.all(sql`DESCRIBE SELECT * FROM ${from}`)).map((r) => String(r['column_name'])));
  } catch (err) {
    throw bad(`${path} cannot be read as ${format}: ${(err as Error).message}`);
  }
  for (const need of ['id', 'type', 'created_at'])
    if (!present.has(need)) throw bad(`${path} has no column ${need}: it is not a tracelake export`);
  return present;
}
