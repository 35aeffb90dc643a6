// npm run bench:binary -- [--runs 7] [--build]
// The single binary beside `node dist/src/cli.js`, alternating in one run: its size, `--version`, and
// start to first answer (spawn `serve` on a fresh data folder -> first 200 from /healthcheck), plus
// the binary's very first start (empty cache folder, so it unpacks). Writes bench/results/<date>-binary.json.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildBinary } from '../scripts/binary/build.js';
import { ROOT } from '../scripts/binary/config.js';
import { servedUrl } from '../src/cli/served-line.js';
import { fmt, machine, median, peakRssMiB, writeResults, type Measurement } from './common.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '7' },
    build: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
  },
});
const runs = Number(values.runs);
const binary = join(ROOT, 'dist', 'bin', 'tracelake');
const cli = join(ROOT, 'dist', 'src', 'cli.js');
if (!existsSync(cli)) throw new Error('dist/src/cli.js is missing: run `npm run build` first');
if (values.build || !existsSync(binary)) await buildBinary({ out: join(ROOT, 'dist', 'bin') });

const scratch = mkdtempSync(join(tmpdir(), 'tracelake-bench-bin-'));
const warmCache = join(scratch, 'cache');
const empty = join(scratch, 'empty-path');
type Variant = 'binary' | 'node';
const command = (v: Variant, args: string[]): [string, string[]] => (v === 'binary' ? [binary, args] : [process.execPath, [cli, ...args]]);
// The binary runs as under `env -i`; node gets the same variables plus its PATH.
const envFor = (v: Variant, cache = warmCache) =>
  v === 'binary' ? { PATH: empty, TRACELAKE_CACHE_DIR: cache } : { PATH: process.env['PATH'] ?? '' };

function versionMs(v: Variant): number {
  const [cmd, args] = command(v, ['--version']);
  const t = performance.now();
  const r = spawnSync(cmd, args, { env: envFor(v), cwd: scratch, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${v} --version failed: ${r.stderr}`);
  return performance.now() - t;
}

/** Spawn `serve` on a fresh folder; ms until /healthcheck first answers 200, and the server's peak RSS then. */
async function firstAnswer(v: Variant, cache?: string): Promise<{ ms: number; rss: number | null }> {
  const data = mkdtempSync(join(scratch, 'data-'));
  const [cmd, args] = command(v, ['serve', '--data', data, '--port', '0', '--quiet']);
  const t = performance.now();
  const child = spawn(cmd, args, {
    env: { ...envFor(v, cache), TRACELAKE_API_KEY: 'bench-key' },
    cwd: scratch,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${v} serve exited: ${out}`);
      if (performance.now() - t > 60_000) throw new Error(`${v} serve did not answer in 60 s`);
      const url = servedUrl(out);
      if (url) {
        const ok = await fetch(`${url}/healthcheck`).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ok) return { ms: performance.now() - t, rss: peakRssMiB(child.pid) };
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    rmSync(data, { recursive: true, force: true });
  }
}

try {
  versionMs('binary'); // unpack into the warm cache once, outside the timings
  const samples: Record<string, number[]> = {
    'version/binary': [],
    'version/node': [],
    'serve/binary': [],
    'serve/node': [],
    'rss/binary': [],
    'rss/node': [],
    'first-start/binary': [],
  };
  for (let i = 0; i < runs; i++) {
    for (const v of (i % 2 ? ['node', 'binary'] : ['binary', 'node']) as Variant[]) {
      samples[`version/${v}`]!.push(versionMs(v));
      const s = await firstAnswer(v);
      samples[`serve/${v}`]!.push(s.ms);
      if (s.rss !== null) samples[`rss/${v}`]!.push(s.rss);
    }
    const fresh = join(scratch, `cold-${i}`);
    samples['first-start/binary']!.push((await firstAnswer('binary', fresh)).ms);
    rmSync(fresh, { recursive: true, force: true });
  }
  const m = (k: string) => median(samples[k]!);
  const spread = (k: string) => `${fmt(Math.min(...samples[k]!))}–${fmt(Math.max(...samples[k]!))}`;
  const mib = (n: number) => n / 2 ** 20;
  const archives = ['gz', 'xz']
    .map((f) =>
      join(
        ROOT,
        'dist',
        'bin',
        `tracelake-${spawnSync(binary, ['--version'], { env: envFor('binary'), encoding: 'utf8' }).stdout.trim()}-linux-x64.tar.${f}`,
      ),
    )
    .filter((f) => existsSync(f));
  const results: Measurement[] = [
    { name: 'binary size', value: mib(statSync(binary).size), unit: 'MiB' },
    ...archives.map((f) => ({ name: `release archive ${f.slice(-6)}`, value: mib(statSync(f).size), unit: 'MiB' })),
    {
      name: '--version, binary',
      value: m('version/binary'),
      unit: 'ms',
      range: spread('version/binary'),
      ratio_to_node: m('version/binary') / m('version/node'),
    },
    { name: '--version, node dist/src/cli.js', value: m('version/node'), unit: 'ms', range: spread('version/node') },
    {
      name: 'start to first answer, binary',
      value: m('serve/binary'),
      unit: 'ms',
      range: spread('serve/binary'),
      ratio_to_node: m('serve/binary') / m('serve/node'),
    },
    { name: 'start to first answer, node dist/src/cli.js', value: m('serve/node'), unit: 'ms', range: spread('serve/node') },
    { name: 'first start ever, binary (unpacks)', value: m('first-start/binary'), unit: 'ms', range: spread('first-start/binary') },
    { name: 'peak RSS at first answer, binary', value: m('rss/binary'), unit: 'MiB' },
    { name: 'peak RSS at first answer, node dist/src/cli.js', value: m('rss/node'), unit: 'MiB' },
  ];
  const lines = [
    `### Single binary (${new Date().toISOString().slice(0, 10)}, medians of ${runs} alternating runs)`,
    '',
    '| measurement | value | unit | notes |',
    '|---|---:|---|---|',
  ];
  for (const { name, value, unit, ...rest } of results) {
    lines.push(
      `| ${name} | ${fmt(value)} | ${unit} | ${Object.entries(rest)
        .map(([k, v]) => `${k}: ${typeof v === 'number' ? v.toFixed(2) : String(v)}`)
        .join(', ')} |`,
    );
  }
  const table = lines.join('\n');
  process.stdout.write(`${table}\n`);
  const file = writeResults(values.out!, 'binary', {
    runs,
    started: new Date().toISOString(),
    machine: machine(),
    node_of_cli: process.version,
    samples,
    results,
    table,
  });
  process.stderr.write(`wrote ${file}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
