// The first text counts after opening a store with the text index (the token index's dictionaries are
// read on the first one), with token counts on or off (1 or 0), segment counts off:
//   node --import tsx bench/probes/token-count-first.ts <store dir, beside its built.json> [1|0]
import { TraceStore } from '../../src/engine/trace-store.js';
import { readFileSync } from 'node:fs';
const dir = process.argv[2]!;
const info = JSON.parse(readFileSync(`${dir}/../built.json`, 'utf8'));
const tokenCounts = process.argv[3] !== '0';
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let c0 = cpu();
let t0 = performance.now();
const s = await TraceStore.open(dir, { textIndex: true, autoCompact: false, segmentCounts: false, tokenCounts });
const out: Record<string, number> = { open_wall_ms: Math.round(performance.now() - t0), open_cpu_ms: Math.round(cpu() - c0) };
const body = {
  log_stream_id: info.logStreamId,
  filters: [{ type: 'text', column_id: 'input', operator: 'contains', value: 'warranty', case_sensitive: false }],
};
for (const k of ['first', 'second', 'third']) {
  c0 = cpu();
  t0 = performance.now();
  const n = (await s.count('span', info.projectId, body as never)).total_count;
  out[`${k}_count_ms`] = Math.round(performance.now() - t0);
  out[`${k}_count_cpu_ms`] = Math.round(cpu() - c0);
  out['n'] = n;
}
await s.close();
console.log(JSON.stringify({ tokenCounts, ...out, max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1e3) }));
