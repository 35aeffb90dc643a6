import { DuckDBInstance } from '@duckdb/node-api';
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const r = await c.runAndReadAll(process.argv[2]);
console.log(JSON.stringify(r.getRowObjectsJson(), null, 0).slice(0, 4000));
