// Where an import's or export's time goes: runs one data-io step in this process with every DuckDB
// statement timed (wall and process CPU, which counts DuckDB's threads), and the JavaScript between
// statements counted apart. Statements of one step run one after another, so the CPU deltas add up.
//   node --import tsx bench/probes/data-io-profile.ts import-parquet|export-parquet|... WORK_DIR
// WORK_DIR is a data-io --dir (its source/ folder and all.parquet, all.jsonl files).
import { appendFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Connection, Database } from '../../src/db/database.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { compile, type Sql } from '../../src/query/sql.js';

interface Entry {
  sql: string;
  wall: number;
  cpu: number;
  n: number;
}
const byKey = new Map<string, Entry>();
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const key = (sql: string) =>
  sql
    .replace(/\s+/g, ' ')
    .replace(/'[^']*'/g, "'…'")
    .slice(0, 150);
function note(sql: string, wall: number, cpu: number): void {
  if (process.env['TL_PROFILE_DUMP'])
    appendFileSync(process.env['TL_PROFILE_DUMP'], `-- ${wall.toFixed(2)} s ${cpu.toFixed(2)} CPU-s\n${sql}\n`);
  const k = key(sql);
  const e = byKey.get(k) ?? { sql: k, wall: 0, cpu: 0, n: 0 };
  e.wall += wall;
  e.cpu += cpu;
  e.n += 1;
  byKey.set(k, e);
}
for (const m of ['run', 'all', 'columns'] as const) {
  const orig = Connection.prototype[m] as (this: Connection, q: Sql) => Promise<unknown>;
  (Connection.prototype as unknown as Record<string, unknown>)[m] = async function (this: Connection, q: Sql) {
    const w = performance.now();
    const c = cpuNow();
    try {
      return await orig.call(this, q);
    } finally {
      note(compile(q).text, (performance.now() - w) / 1000, cpuNow() - c);
    }
  };
}
const origStream = Database.prototype.stream;
Database.prototype.stream = async function* (this: Database, q: Sql) {
  const w = performance.now();
  const c = cpuNow();
  try {
    yield* origStream.call(this, q);
  } finally {
    // Includes the consumer's work on each chunk (the stream is pulled by it).
    note(`[stream+consumer] ${compile(q).text}`, (performance.now() - w) / 1000, cpuNow() - c);
  }
};

const [step, work] = process.argv.slice(2) as [string, string];
const w0 = performance.now();
const c0 = cpuNow();
if (step.startsWith('import-')) {
  const format = step.slice('import-'.length);
  const target = join(work, `profile-${format}`);
  rmSync(target, { recursive: true, force: true });
  const store = await TraceStore.open(target);
  const r = await store.data.importFile(join(work, `all.${format}`), { project: 'bench', logStream: 'main' });
  const c1 = cpuNow();
  await store.close();
  note('[close]', 0, cpuNow() - c1);
  process.stderr.write(`records ${r.records}\n`);
  rmSync(target, { recursive: true, force: true });
} else {
  const format = step.slice('export-'.length) as 'parquet' | 'jsonl' | 'arrow';
  const store = await TraceStore.open(join(work, 'source'));
  const project = store.findProjects({ name: 'bench' })[0]!;
  const out = join(work, `profile.${format}`);
  const r = await store.data.exportFile(project.id, out, { format });
  await store.close();
  rmSync(out, { force: true });
  process.stderr.write(`records ${r.rows}\n`);
}
const wall = (performance.now() - w0) / 1000;
const cpu = cpuNow() - c0;
const rows = [...byKey.values()].sort((a, b) => b.cpu - a.cpu);
const inSql = rows.reduce((s, r) => s + (r.sql === '[close]' ? 0 : r.cpu), 0);
process.stdout.write(
  `${step}: wall ${wall.toFixed(2)} s, CPU ${cpu.toFixed(2)} s (in statements ${inSql.toFixed(2)}, else ${(cpu - inSql).toFixed(2)})\n`,
);
for (const r of rows.slice(0, 25))
  process.stdout.write(`${r.cpu.toFixed(2).padStart(7)} CPU-s ${r.wall.toFixed(2).padStart(7)} s x${String(r.n).padEnd(4)} ${r.sql}\n`);
