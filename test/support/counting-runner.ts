// A SqlRunner that counts the statements whose text holds a marker (a scan or footer read a test
// expects to be spared), passing every statement on to the database.
import type { SqlRunner } from '../../src/db/database.js';
import { compile, type Sql } from '../../src/query/sql.js';

export function countingRunner(db: SqlRunner, marker: string): { runner: SqlRunner; count: () => number } {
  let n = 0;
  return {
    runner: {
      all: (q: Sql) => {
        if (compile(q).text.includes(marker)) n++;
        return db.all(q);
      },
    },
    count: () => n,
  };
}
