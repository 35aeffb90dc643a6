// The text index build with the token index (this tree) against the build of trigram sets only
// (another checkout's src/storage/indexes/text-index.ts, e.g. /work/main's), segment by segment over an
// existing store, taking turns (old, new, old, new...) so a loaded machine weighs on both alike.
// Process CPU time (DuckDB's threads included) and wall time per span; the new build's files are
// written beside each segment (.tix, .tok) with --write, so the store opens with its text index ready.
//   node --import tsx bench/probes/token-build.ts --dir <store> --base <checkout>/src/storage/indexes/text-index.ts [--rounds 1] [--write]
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Database } from '../../src/db/database.js';
import { buildTextIndexFiles, textIndexPath, tokenIndexPath } from '../../src/storage/indexes/text-index.js';

const { values: a } = parseArgs({
  options: { dir: { type: 'string' }, base: { type: 'string' }, rounds: { type: 'string' }, write: { type: 'boolean' } },
});
const rounds = Number(a.rounds ?? 1);
const scratch = mkdtempSync(join(tmpdir(), 'token-build-'));
type Build = (conn: unknown, abs: string) => Promise<unknown>;
const old = a.base ? ((await import(resolve(a.base))) as { buildTextIndex: Build }).buildTextIndex : null;
const db = await Database.open();
const conn = await db.dedicated();
const m = JSON.parse(readFileSync(join(a.dir!, 'manifest.json'), 'utf8')) as { segments: { file: string; rows: number; kind: string }[] };
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const totals = { rows: 0, old_cpu_ms: 0, old_wall_ms: 0, new_cpu_ms: 0, new_wall_ms: 0, parquet_bytes: 0, tix_bytes: 0, tok_bytes: 0 };
const segs: Record<string, unknown>[] = [];
for (const s of m.segments) {
  const f = join(a.dir!, s.file);
  const row: Record<string, number | string> = { file: s.file, kind: s.kind, rows: s.rows };
  for (let r = 0; r < rounds; r++) {
    for (const side of old ? (['old', 'new'] as const) : (['new'] as const)) {
      const c0 = cpuMs();
      const t0 = performance.now();
      // The new build writes its files (beside the segment with --write, else in a scratch folder).
      const to =
        a.write && r === 0
          ? { tix: textIndexPath(f), tok: tokenIndexPath(f) }
          : { tix: join(scratch, 'x.tix'), tok: join(scratch, 'x.tok') };
      if (side === 'old') await old!(conn, f);
      else await buildTextIndexFiles(conn, f, to);
      const wall = performance.now() - t0;
      const cpu = cpuMs() - c0;
      totals[`${side}_cpu_ms`] += cpu;
      totals[`${side}_wall_ms`] += wall;
      row[`${side}_cpu_us_per_row`] = Number(((cpu * 1000) / s.rows).toFixed(2));
      if (side === 'new') {
        row['tok_bytes'] = statSync(to.tok).size;
        if (r === 0) {
          totals.tix_bytes += statSync(to.tix).size;
          totals.tok_bytes += statSync(to.tok).size;
        }
      }
      process.stderr.write(`${s.file} ${side}: ${(cpu / 1000).toFixed(1)} s CPU, ${(wall / 1000).toFixed(1)} s wall\n`);
    }
  }
  totals.rows += s.rows;
  totals.parquet_bytes += statSync(f).size;
  segs.push(row);
}
await db.close();
const per = (ms: number) => Number(((ms * 1000) / (totals.rows * rounds)).toFixed(2));
console.log(
  JSON.stringify(
    {
      segments: segs,
      rows: totals.rows,
      old_cpu_us_per_row: old ? per(totals.old_cpu_ms) : null,
      new_cpu_us_per_row: per(totals.new_cpu_ms),
      old_wall_us_per_row: old ? per(totals.old_wall_ms) : null,
      new_wall_us_per_row: per(totals.new_wall_ms),
      parquet_mb: Math.round(totals.parquet_bytes / 1e6),
      tix_mb: Math.round(totals.tix_bytes / 1e6),
      tok_mb: Math.round(totals.tok_bytes / 1e6),
    },
    null,
    1,
  ),
);
