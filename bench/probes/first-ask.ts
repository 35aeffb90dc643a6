// The first question asked at once after an open, as a script does (`open`, then `count`): a copy of a
// template store opened in a new process, the three-leaf count of the fresh matrix asked with
// parameters no earlier run used, then a second count with other parameters (the same code, warm).
// The fresh matrix (bench/fresh.ts) asks only after drawing its parameters, by which time the open's
// background work is done; this asks before it. `--base <checkout>` runs that checkout's build (its
// dist/) in turns with this one, with the same parameters; both answers must agree. `--delay <ms>`
// waits that long after the open first. `--server`: the side's `tracelake serve` started on the copy, the
// counts asked over HTTP as soon as it prints its address (open_ms: start to that line). The library side
// also times the import of the public entry, the first thing its process does (import_ms).
//
//   node dist/bench/probes/first-ask.js /work/fresh1m-f [--base /tmp/base] [--runs 6] [--delay 0] [--server]
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cpuSeconds, jsonFromChild } from '../common.js';

const MODELS = ['gpt-4o', 'gpt-4.1', 'gpt-4o-mini', 'claude-3-5-sonnet-20241022'];
const TAGS = ['mobile', 'canary', 'agent', 'regression', 'experiment-a', 'long-context'];
const HERE = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

interface Ask {
  /** Library: importing the public entry (dist/src/index.js) in a new process, as a script's first line does. */
  import_ms?: number;
  open_ms: number;
  first_ms: number;
  first_cpu_ms: number;
  second_ms: number;
  answers: number[];
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const body = (logStreamId: string, run: number, k: number) => ({
  log_stream_id: logStreamId,
  filters: [
    { type: 'text', column_id: 'model', operator: 'eq', value: MODELS[(run + k) % MODELS.length] },
    { type: 'number', column_id: 'metrics/correctness', operator: 'gt', value: 0.2 + ((run * 7 + k * 3) % 60) / 100 + 0.00123 * run },
    { type: 'collection', column_id: 'tags', operator: 'contains', value: TAGS[(run * 5 + k) % TAGS.length] },
  ],
});

const KEY = 'tl_first_ask_probe_key_0123456789';

/** The side's server on `copy`, asked over HTTP (the process's CPU is the server's, read from /proc). */
async function serverAsk(
  root: string,
  copy: string,
  info: { projectId: string; logStreamId: string },
  run: number,
  delay: number,
): Promise<Ask> {
  const { startServer } = await import(pathToFileURL(join(root, 'dist/bench/server-process.js')).href);
  const t0 = performance.now();
  const server = await startServer(copy, KEY, { cli: join(root, 'dist/src/cli.js') });
  const open_ms = performance.now() - t0;
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  const ask = async (k: number) => {
    const res = await fetch(`${server.url}/projects/${info.projectId}/spans/count`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'Galileo-API-Key': KEY },
      body: JSON.stringify(body(info.logStreamId, run, k)),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return ((await res.json()) as { total_count: number }).total_count;
  };
  const cpu0 = cpuMs(server.pid);
  const t1 = performance.now();
  const a = await ask(0);
  const first_ms = performance.now() - t1;
  const first_cpu_ms = cpuMs(server.pid) - cpu0;
  const t2 = performance.now();
  const b = await ask(1);
  const second_ms = performance.now() - t2;
  await server.stop();
  return { open_ms, first_ms, first_cpu_ms, second_ms, answers: [a, b] };
}

/** A process's user and system CPU in ms (/proc ticks of 10 ms). */
const cpuMs = (pid: number) => (cpuSeconds(pid) ?? 0) * 1000;

/** One ask in this process with the build at `root`: copy, open, count at once, count again with other parameters. */
async function child(root: string, template: string, copy: string, run: number, delay: number, server: boolean): Promise<Ask> {
  const info = JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
  // The public entry first, before anything of the build is loaded (the copy below loads the store too).
  const ti = performance.now();
  const { TraceStore } = server ? { TraceStore: null } : await import(pathToFileURL(join(root, 'dist/src/index.js')).href);
  const import_ms = performance.now() - ti;
  const { copyStore } = await import(pathToFileURL(join(root, 'dist/bench/peers/store-template.js')).href);
  rmSync(copy, { recursive: true, force: true });
  copyStore(join(template, 'tracelake'), copy);
  if (server) {
    try {
      return await serverAsk(root, copy, info, run, delay);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }
  const t0 = performance.now();
  const store = await TraceStore.open(copy);
  const open_ms = performance.now() - t0;
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  const cpu0 = process.cpuUsage();
  const t1 = performance.now();
  const a = (await store.count('span', info.projectId, body(info.logStreamId, run, 0))).total_count as number;
  const first_ms = performance.now() - t1;
  const cpu = process.cpuUsage(cpu0);
  const t2 = performance.now();
  const b = (await store.count('span', info.projectId, body(info.logStreamId, run, 1))).total_count as number;
  const second_ms = performance.now() - t2;
  await store.close();
  rmSync(copy, { recursive: true, force: true });
  return { import_ms, open_ms, first_ms, first_cpu_ms: (cpu.user + cpu.system) / 1000, second_ms, answers: [a, b] };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const template = process.argv[2]!;
  const runs = Number(arg('runs', '6'));
  const delay = Number(arg('delay', '0'));
  const server = process.argv.includes('--server');
  const base = process.argv.includes('--base') ? resolve(arg('base', '')) : null;
  const sides = [{ name: 'this build', root: HERE }, ...(base ? [{ name: `base ${base}`, root: base }] : [])];
  const got = new Map<string, Ask[]>(sides.map((s) => [s.name, []]));
  for (let run = 0; run < runs; run++) {
    // Sides in turns, the first alternating, each in a process of its own.
    const order = run % 2 === 0 ? sides : [...sides].reverse();
    const answers: string[] = [];
    for (const side of order) {
      const copy = join(template, `..`, `first-ask-copy-${process.pid}`);
      const ask = await jsonFromChild<Ask>(import.meta.url, [
        'child',
        side.root,
        template,
        copy,
        String(run),
        String(delay),
        String(server),
      ]);
      got.get(side.name)!.push(ask);
      answers.push(JSON.stringify(ask.answers));
      const first = `first count ${ask.first_ms.toFixed(1)} ms (CPU ${ask.first_cpu_ms.toFixed(0)})`;
      const imported = ask.import_ms === undefined ? '' : `import ${ask.import_ms.toFixed(0)} ms, `;
      console.log(
        `run ${run} ${side.name}: ${imported}open ${ask.open_ms.toFixed(0)} ms, ${first}, ` +
          `second ${ask.second_ms.toFixed(1)} ms, answers ${ask.answers.join('/')}`,
      );
    }
    if (new Set(answers).size !== 1) throw new Error(`run ${run}: the builds' answers differ: ${answers.join(' vs ')}`);
  }
  const summary = sides.map((s) => {
    const asks = got.get(s.name)!;
    return {
      side: s.name,
      ...(server ? {} : { import_ms: median(asks.map((a) => a.import_ms ?? Number.NaN)) }),
      open_ms: median(asks.map((a) => a.open_ms)),
      first_ms: median(asks.map((a) => a.first_ms)),
      first_cpu_ms: median(asks.map((a) => a.first_cpu_ms)),
      second_ms: median(asks.map((a) => a.second_ms)),
    };
  });
  console.log(JSON.stringify({ template, runs, delay, server, summary }, null, 2));
}

if (process.argv[2] === 'child') {
  const [root, template, copy, run, delay, server] = process.argv.slice(3);
  console.log(JSON.stringify(await child(root!, template!, copy!, Number(run), Number(delay), server === 'true')));
} else await main();
