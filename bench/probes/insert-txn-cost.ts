// What a transaction around a lone insert costs the memory inserter: the same 1,000-row INSERT ...
// SELECT on a dedicated connection (polled, as the inserter runs it), alone or between BEGIN and
// COMMIT, taking turns in blocks. Reports process CPU (every thread) and wall time per insert.
//   node dist/bench/probes/insert-txn-cost.js [inserts=400] [blocks=6]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import { sql } from '../../src/query/sql.js';

const inserts = Number(process.argv[2] ?? 400);
const blocks = Number(process.argv[3] ?? 6);
const dir = mkdtempSync(join(tmpdir(), 'tracelake-txn-'));
const db = await Database.open({ tempDirectory: dir });
const conn = await db.dedicated();
await conn.run(sql`CREATE TABLE t (a BIGINT, b VARCHAR)`);
const insert = sql`INSERT INTO t SELECT range, 'span text of a few words' FROM range(1000)`;
const forms = {
  alone: async () => conn.runPolled(insert),
  in_transaction: async () => {
    await conn.run(sql`BEGIN TRANSACTION`);
    await conn.runPolled(insert);
    await conn.run(sql`COMMIT`);
  },
};
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e3;
};
const out: Record<string, { cpu_ms: number[]; wall_ms: number[] }> = {
  alone: { cpu_ms: [], wall_ms: [] },
  in_transaction: { cpu_ms: [], wall_ms: [] },
};
for (let b = 0; b < blocks + 1; b++) {
  for (const [name, run] of Object.entries(forms)) {
    const c = cpu();
    const t = performance.now();
    for (let i = 0; i < inserts; i++) await run();
    // The first block warms both up.
    if (b === 0) continue;
    out[name]!.cpu_ms.push(Math.round(((cpu() - c) / inserts) * 1000) / 1000);
    out[name]!.wall_ms.push(Math.round(((performance.now() - t) / inserts) * 1000) / 1000);
  }
  await conn.run(sql`DELETE FROM t`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(
  JSON.stringify({
    load: readFileSync('/proc/loadavg', 'utf8').trim(),
    per_insert: out,
    median_cpu_ms: { alone: median(out['alone']!.cpu_ms), in_transaction: median(out['in_transaction']!.cpu_ms) },
    median_wall_ms: { alone: median(out['alone']!.wall_ms), in_transaction: median(out['in_transaction']!.wall_ms) },
  }),
);
await db.close();
rmSync(dir, { recursive: true, force: true });
