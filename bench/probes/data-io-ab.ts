// Two builds of tracelake taking turns at data-io steps, for a shared, noisy machine: each step of
// bench/data-io.ts runs in a child process of the build's own checkout (its own peak RSS), old then
// new, round after round; medians and new/old ratios are reported. Imports of both builds read the
// same files in --work (all.parquet, all.jsonl, made by a data-io run); each build exports into a
// folder of its own. Medians of records/s, process CPU seconds (cpu_ratio: old/new) and peak RSS.
//   node --import tsx bench/probes/data-io-ab.ts --old PATH --new PATH --work DIR [--rounds 3]
//     [--steps import-parquet,...] [--once export-arrow] [--name 1m-ab]
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, machine, writeResults } from '../common.js';

const { values } = parseArgs({
  options: {
    old: { type: 'string' },
    new: { type: 'string' },
    work: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    steps: { type: 'string', default: 'import-parquet,import-jsonl,export-parquet,export-jsonl' },
    once: { type: 'string', default: '' },
    name: { type: 'string', default: '1m-ab' },
  },
});
if (!values.old || !values.new || !values.work) throw new Error('--old, --new and --work are required');
const builds = { old: values.old, new: values.new };
const work = values.work;
const source = join(work, 'source');

function run(build: 'old' | 'new', step: string): Record<string, unknown> {
  const repo = builds[build];
  // Exports write into a folder of the build's own; imports read the shared files.
  const into = step.startsWith('export') ? join(work, `exports-${build}`) : work;
  mkdirSync(into, { recursive: true });
  const child = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench/data-io.ts'), 'step', step, source, into], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (child.status !== 0) throw new Error(`${build} ${step} failed: ${child.stderr}`);
  const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;
  process.stderr.write(
    `${build} ${step.padEnd(15)} ${fmt(Number(r['records_per_s']))} records/s, ${r['seconds']} s, ${r['cpu_s']} CPU-s, ` +
      `peak RSS ${r['peak_rss_mib']} MiB, load ${r['load_1m']}\n`,
  );
  return { build, ...r };
}

const runs: Record<string, unknown>[] = [];
const steps = values.steps!.split(',').filter(Boolean);
const rounds = Number(values.rounds);
for (let i = 0; i < rounds; i++) {
  for (const step of steps) {
    // Which build goes first alternates too, so neither always meets the same neighbour's load.
    const order: ('old' | 'new')[] = i % 2 === 0 ? ['old', 'new'] : ['new', 'old'];
    for (const b of order) runs.push({ round: i, ...run(b, step) });
  }
}
for (const step of values.once!.split(',').filter(Boolean))
  for (const b of ['old', 'new'] as const) runs.push({ round: 0, ...run(b, step) });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const summary: Record<string, unknown>[] = [];
for (const step of [...steps, ...values.once!.split(',').filter(Boolean)]) {
  const of = (b: string, k: string) => runs.filter((r) => r['step'] === step && r['build'] === b).map((r) => Number(r[k]));
  const row = {
    step,
    runs: of('old', 'records_per_s').length,
    old_records_per_s: Math.round(median(of('old', 'records_per_s'))),
    new_records_per_s: Math.round(median(of('new', 'records_per_s'))),
    old_spans_per_s: Math.round(median(of('old', 'records_per_s')) * 0.866),
    new_spans_per_s: Math.round(median(of('new', 'records_per_s')) * 0.866),
    speedup: Number((median(of('new', 'records_per_s')) / median(of('old', 'records_per_s'))).toFixed(2)),
    old_cpu_s: median(of('old', 'cpu_s')),
    new_cpu_s: median(of('new', 'cpu_s')),
    cpu_ratio: Number((median(of('old', 'cpu_s')) / median(of('new', 'cpu_s'))).toFixed(2)),
    old_peak_rss_mib: median(of('old', 'peak_rss_mib')),
    new_peak_rss_mib: median(of('new', 'peak_rss_mib')),
  };
  summary.push(row);
  process.stderr.write(`${JSON.stringify(row)}\n`);
}
const file = writeResults(join(new URL('..', import.meta.url).pathname, 'results'), `data-io-${values.name}`, {
  machine: machine(),
  builds,
  summary,
  runs,
});
process.stderr.write(`results: ${file}\n`);
