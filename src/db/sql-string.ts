// A string written into SQL text as a quoted literal, where DuckDB takes no parameter (COPY targets,
// ATTACH and view paths, settings): quotes doubled, backslashes literal. Only for the store's own
// paths and values (its folder is the operator's and may hold quotes), never for request data.
import { raw, type Sql } from '../query/sql.js';

export function stringLiteral(text: string): Sql {
  return raw(`'${text.replaceAll("'", "''")}'`);
}
