// SQL text for a string where DuckDB takes no parameter (COPY targets, ATTACH paths): quotes doubled,
// backslashes literal. Only for the store's own paths and values, never for user input.
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
