// What a seal's Parquet write costs by codec and writer setting: the CPU (every thread of this process)
// of COPYing a memory table of spans, as a seal does (its SELECT with tag_set, 8,192-row groups), to
// ZSTD level 1 (today's seals), Snappy, LZ4, uncompressed, and with dictionaries turned off. Variants
// take turns, `--rounds` times, on one table; the file size of each is reported too.
//   node --import tsx bench/probes/seal-codec.ts [--spans 200000] [--rounds 3]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Database } from '../../src/db/database.js';
import { stringLiteral } from '../../src/db/sql-string.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { TAG_SET_COLUMN, TAG_SET_SQL } from '../../src/record/record-columns.js';
import { generateBatches } from '../../test/support/generator.js';
import { median, parquetFiles } from '../common.js';
import { raw, sql } from '../../src/query/sql.js';

const { values } = parseArgs({ options: { spans: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' } } });
const spans = Number(values.spans);
const rounds = Number(values.rounds);

const VARIANTS: Record<string, string> = {
  'zstd 1 (seals today)': 'COMPRESSION zstd, COMPRESSION_LEVEL 1',
  'zstd 3 (merges today)': 'COMPRESSION zstd, COMPRESSION_LEVEL 3',
  snappy: 'COMPRESSION snappy',
  lz4: 'COMPRESSION lz4_raw',
  uncompressed: 'COMPRESSION uncompressed',
  'zstd 1, no dictionaries': 'COMPRESSION zstd, COMPRESSION_LEVEL 1, DICTIONARY_SIZE_LIMIT 0',
};

const dir = mkdtempSync(join(tmpdir(), 'tracelake-seal-codec-'));
try {
  const store = await TraceStore.open(join(dir, 'store'), { autoCompact: false });
  const project = store.createProject({ name: 'codec' });
  const ls = store.createLogStream(project.id, 'codec');
  for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 7 }))
    await store.logTraces(project.id, { log_stream_id: ls.id, traces: batch as never });
  await store.flush();
  await store.close();
  const files = parquetFiles(join(dir, 'store')).filter((f) => f.includes('kind=span'));
  const db = await Database.open({ threads: 2, memoryLimit: '2GB', footerCache: false });
  // A memory table as a seal sees it: the segments' own columns (without tag_set, which a seal computes).
  const own = raw(`COLUMNS(lambda c: c <> '${TAG_SET_COLUMN}' AND NOT regexp_matches(c, '^m[0-9]+$'))`);
  await db.run(sql`CREATE TABLE t AS SELECT ${own} FROM read_parquet(${stringLiteral(files[0]!)}, union_by_name = true) LIMIT 0`);
  for (const f of files) await db.run(sql`INSERT INTO t SELECT ${own} FROM read_parquet(${stringLiteral(f)}) ORDER BY created_at`);
  const rows = Number((await db.all(sql`SELECT count(*) AS n FROM t`))[0]!['n']);
  const cpu: Record<string, number[]> = {};
  const bytes: Record<string, number> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, opts] of Object.entries(VARIANTS)) {
      const out = join(dir, `out-${r}.parquet`);
      const c0 = process.cpuUsage();
      await db.run(
        sql`COPY (SELECT *, ${raw(TAG_SET_SQL)} AS ${raw(TAG_SET_COLUMN)} FROM t) TO ${stringLiteral(out)} (FORMAT parquet, ${raw(opts)}, ROW_GROUP_SIZE 8192)`,
      );
      const c = process.cpuUsage(c0);
      (cpu[name] ??= []).push((c.user + c.system) / rows);
      bytes[name] = statSync(out).size / rows;
      rmSync(out);
    }
  }
  await db.close();
  const base = median(cpu['zstd 1 (seals today)']!);
  process.stdout.write(
    `${rows} span rows, ${rounds} rounds, median CPU per row (all threads)\n\n| variant | µs a row | ratio | bytes a row |\n|---|---:|---:|---:|\n`,
  );
  for (const name of Object.keys(VARIANTS))
    process.stdout.write(
      `| ${name} | ${median(cpu[name]!).toFixed(2)} | ${(median(cpu[name]!) / base).toFixed(2)} | ${bytes[name]!.toFixed(0)} |\n`,
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
