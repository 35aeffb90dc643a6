// Child process of test/db/allocator-flush.test.ts. `prepare DIR`: writes DIR/in.parquet (120k wide rows
// in row groups of 32,768, as a segment). `copy DIR`: on a database opened as the store opens its own
// (openMergeDatabase, one thread), rewrites it as a merge does and prints RSS before and
// the process's peak (VmHWM) after, in MiB. Processes of their own, so nothing else moves the peak.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openMergeDatabase } from '../../src/storage/segments/merge.js';
import { sql } from '../../src/query/sql.js';
import { stringLiteral } from '../../src/db/sql-string.js';

const status = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
const [mode, dir] = process.argv.slice(2) as [string, string];
const db = await openMergeDatabase(dir, 1);
const input = join(dir, 'in.parquet');
if (mode === 'prepare') {
  await db.run(
    sql`COPY (SELECT range AS seq, md5(range::VARCHAR) || repeat('i', 600) AS input, md5((range + 1)::VARCHAR) || repeat('o', 600) AS output FROM range(120000))
     TO ${stringLiteral(input)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`,
  );
} else {
  const before = status('VmRSS');
  await db.run(sql`COPY (SELECT * FROM read_parquet([${stringLiteral(input)}, ${stringLiteral(input)}])) TO ${stringLiteral(join(dir, 'out.parquet'))} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`);
  console.log(JSON.stringify({ before, peak: status('VmHWM') }));
}
await db.close();
