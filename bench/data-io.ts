// Export and import throughput: fills a folder with the bench workload, then, each in a
// child process of its own so its peak RSS is its own: export to Parquet, JSON lines and Arrow IPC,
// the library's Arrow batches, and import of the Parquet and JSON lines exports into new folders; and,
// as the floor on this machine in the same run, DuckDB alone copying the Parquet export (plain, and
// sorted by created_at, id as segments are) into a ZSTD Parquet file.
//   node --import tsx bench/data-io.ts [--size 100k|1m|N] [--dir PATH] [--reuse] [--steps import-parquet,...]
// Reports records/s (spans, traces and sessions are all records), peak RSS per step, and the ratios
// of export and import to the raw copy. --reuse keeps a source folder already filled in --dir.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Database } from '../src/db/database.js';
import { TraceStore } from '../src/engine/trace-store.js';
import { fmt, machine, parseSize, peakRssMiB, writeResults } from './common.js';
import { spanBatches } from './workload.js';
import { raw, sql } from '../src/query/sql.js';
import { stringLiteral } from '../src/db/sql-string.js';

type Step =
  | 'export-parquet'
  | 'export-jsonl'
  | 'export-arrow'
  | 'export-batches'
  | 'raw-copy'
  | 'raw-copy-sorted'
  | 'import-parquet'
  | 'import-jsonl'
  | 'import-arrow';
const STEPS: Step[] = [
  'export-parquet',
  'export-jsonl',
  'export-arrow',
  'export-batches',
  'raw-copy',
  'raw-copy-sorted',
  'import-parquet',
  'import-jsonl',
  'import-arrow',
];

async function step(name: Step, dir: string, work: string): Promise<Record<string, unknown>> {
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  let records = 0;
  let bytes = 0;
  if (name.startsWith('raw-copy')) {
    // DuckDB alone, with the store's default memory limit: the export file into a ZSTD Parquet file.
    const db = await Database.open({ memoryLimit: '512MB', tempDirectory: work });
    const order = raw(name === 'raw-copy-sorted' ? ' ORDER BY created_at, id' : '');
    const out = join(work, 'raw.parquet');
    const r = await db.all(
      sql`COPY (SELECT * FROM read_parquet(${join(work, 'all.parquet')})${order})
          TO ${stringLiteral(out)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 32768)`,
    );
    records = Number(r[0]?.['Count'] ?? 0);
    bytes = statSync(out).size;
    await db.close();
    rmSync(out, { force: true });
  } else if (name.startsWith('export')) {
    const store = await TraceStore.open(dir);
    const project = store.findProjects({ name: 'bench' })[0]!;
    if (name === 'export-batches') {
      for await (const b of store.data.export(project.id)) records += b.numRows;
    } else {
      const format = name.slice('export-'.length) as 'parquet' | 'jsonl' | 'arrow';
      const out = join(work, `all.${format}`);
      records = (await store.data.exportFile(project.id, out, { format })).rows;
      bytes = statSync(out).size;
    }
    await store.close();
  } else {
    const format = name.slice('import-'.length);
    const target = join(work, `import-${format}`);
    rmSync(target, { recursive: true, force: true });
    const store = await TraceStore.open(target);
    records = (await store.data.importFile(join(work, `all.${format}`), { project: 'bench', logStream: 'main' })).records;
    await store.close(); // seals what the import left in memory: part of the cost
  }
  const seconds = (performance.now() - started) / 1000;
  // Process CPU time (all of DuckDB's threads and node's): a shared machine's load inflates wall time, not this.
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  return {
    step: name,
    records,
    seconds: Number(seconds.toFixed(2)),
    cpu_s: Number(cpuS.toFixed(2)),
    records_per_cpu_s: Math.round(records / cpuS),
    records_per_s: Math.round(records / seconds),
    peak_rss_mib: peakRssMiB(),
    load_1m: Number(loadavg()[0]!.toFixed(2)),
    file_mib: bytes ? Number((bytes / 2 ** 20).toFixed(1)) : undefined,
  };
}

async function fill(dir: string, spans: number): Promise<void> {
  const store = await TraceStore.open(dir);
  const project = store.createProject({ name: 'bench' });
  const stream = store.createLogStream(project.id, 'main');
  for (const batch of spanBatches({ spans }))
    await store.logTraces(project.id, { log_stream_id: stream.id, traces: batch.traces as never });
  await store.flush();
  await store.maintenance.compact();
  await store.close();
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { size: { type: 'string' }, dir: { type: 'string' }, reuse: { type: 'boolean' }, steps: { type: 'string' } },
});
if (positionals[0] === 'step') {
  const [, name, dir, work] = positionals as [string, Step, string, string];
  process.stdout.write(`${JSON.stringify(await step(name, dir, work))}\n`);
} else {
  const size = values.size ?? '100k';
  const spans = parseSize(size);
  const work = values.dir ?? mkdtempSync(join(tmpdir(), 'tracelake-data-io-'));
  const dir = join(work, 'source');
  const t0 = performance.now();
  if (values.reuse && existsSync(join(dir, 'manifest.json'))) process.stderr.write(`reusing the source folder in ${dir}\n`);
  else {
    await fill(dir, spans);
    process.stderr.write(`filled ${fmt(spans)} spans in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  }
  const results: Record<string, unknown>[] = [];
  const steps = values.steps === undefined ? STEPS : (values.steps.split(',').filter(Boolean) as Step[]);
  for (const s of steps) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, 'step', s, dir, work], {
      encoding: 'utf8',
      maxBuffer: 1 << 24,
    });
    if (child.status !== 0) throw new Error(`${s} failed: ${child.stderr}`);
    const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
    results.push(r);
    process.stderr.write(
      `${s.padEnd(15)} ${fmt(Number(r['records']))} records in ${r['seconds']} s = ${fmt(Number(r['records_per_s']))}/s, ` +
        `${r['cpu_s']} CPU-s, peak RSS ${r['peak_rss_mib']} MiB, load ${r['load_1m']}\n`,
    );
  }
  const rate = (s: Step) => Number(results.find((r) => r['step'] === s)?.['records_per_s'] ?? NaN);
  const ratios = {
    export_parquet_to_raw_copy: Number((rate('export-parquet') / rate('raw-copy')).toFixed(2)),
    import_parquet_to_raw_copy: Number((rate('import-parquet') / rate('raw-copy')).toFixed(2)),
    import_parquet_to_raw_sorted_copy: Number((rate('import-parquet') / rate('raw-copy-sorted')).toFixed(2)),
  };
  process.stderr.write(`ratios (records/s over DuckDB's raw copy of the same file): ${JSON.stringify(ratios)}\n`);
  const file = writeResults(join(new URL('.', import.meta.url).pathname, 'results'), `data-io-${size}`, {
    machine: machine(),
    spans,
    results,
    ratios,
  });
  process.stderr.write(`results: ${file}\n`);
  if (!values.dir) rmSync(work, { recursive: true, force: true });
}
