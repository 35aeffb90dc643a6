// @duckdb/node-api for the whole code base, made one file at build time (scripts/bundle-dist.ts): the
// package is ~180 CommonJS files, each read and scanned for its exports when imported from an ES
// module (~0.13 s of every process's start). The native bindings stay a package of their own (one
// addon per process). Import the API from here, never from the package: it checks values (lists,
// structs) with instanceof, so a value made by one copy is not one to another. Names are listed, not
// `export *`: a bundle cannot see a CommonJS module's names to re-export them.
export {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBInstance,
  DuckDBTableFunction,
  DuckDBTypeId,
  INTEGER,
  LIST,
  MAP,
  StatementType,
  TIMESTAMP,
  VARCHAR,
  listValue,
  type DuckDBConnection,
  type DuckDBDataChunk,
  type DuckDBPendingResult,
  type DuckDBResultReader,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
