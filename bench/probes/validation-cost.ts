// What one schema check of a log-traces body costs: process CPU per span of issuesOf(LogTracesBody)
// over fresh copies of ~1,000-span bodies (the check the server's route makes, and that the library
// method it calls no longer repeats for a body the route marked). Five passes after a warm-up.
//   node dist/bench/probes/validation-cost.js [spans=50000]
import { readFileSync } from 'node:fs';
import { issuesOf } from '../../src/schemas/check.js';
import { LogTracesBody } from '../../src/schemas/ingest.js';
import { generateBatches } from '../../test/support/generator.js';

const total = Number(process.argv[2] ?? 50_000);
const bodies: object[] = [];
let spans = 0;
const count = (x: { spans?: unknown[] }): number => ((x.spans ?? []) as { spans?: unknown[] }[]).reduce((n, s) => n + 1 + count(s), 0);
for (const batch of generateBatches({ spans: total, batchSpans: 1000, seed: 11 })) {
  // As parsed from JSON: what the server's route sees.
  bodies.push(JSON.parse(JSON.stringify({ log_stream_id: '22222222-2222-4222-8222-222222222222', reliable: true, traces: batch })));
  spans += batch.reduce((n, t) => n + count(t as { spans?: unknown[] }), 0);
}
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
for (const b of bodies) if (issuesOf(LogTracesBody, b)) throw new Error('a generated body failed the check');
const passes: number[] = [];
for (let rep = 0; rep < 5; rep++) {
  // Fresh objects each pass: the depth check remembers the bodies it walked.
  const copies = bodies.map((b) => structuredClone(b));
  const c = cpu();
  for (const b of copies) issuesOf(LogTracesBody, b);
  passes.push(Math.round(((cpu() - c) / spans) * 1e8) / 100);
}
console.log(JSON.stringify({ spans, cpu_us_per_span_per_check: passes, load: readFileSync('/proc/loadavg', 'utf8').trim() }));
