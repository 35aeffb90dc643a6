// What a large store costs around its queries, as a user meets it, over a copy of a settled template
// (--data-dir with built.json, see peers/store-template.ts; at 100M bench/build-100m.ts):
// - a writable library open to its first answer, in a process of its own (time, RSS after);
// - `tracelake serve` started on the copy to its first answer over HTTP (time, RSS after), every
//   peer question asked over HTTP (first ask and the median of the rest), the server's resident
//   memory sampled while it answers, and the 1% delete by filter;
// - spans logged over HTTP by 4 clients (ids given by the client, as the official client sends them),
//   then SIGTERM right after the last acknowledgement: how long the stop takes;
// - the next library open, which replays what the stop left in the log.
// The server runs with --no-merges: a template's import segments are ones the merge policy would
// rewrite in the background under the questions (~28 GB at 100M).
//   npm run bench -- --size 100m --only costs --data-dir /work/data-100m [--runs 3] [--log-spans 100000]
//   node dist/bench/costs.js --data-dir D [--runs 3] [--log-spans 100000] [--work W]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { TraceStore } from '../src/engine/trace-store.js';
import { countSpans, generateBatches, type GenTrace } from '../test/support/generator.js';
import { jsonFromChild, machine, median, statusMiB, writeResults, type Measurement } from './common.js';
import { copyStore, type TemplateInfo } from './peers/store-template.js';
import { poster, startServer } from './server-process.js';
import { QUESTIONS } from './workload.js';

const rssNow = () => statusMiB(process.pid, 'VmRSS');

/** In a child process: open the store writable, answer one count, report time and memory. */
async function openOnce(dir: string, projectId: string, logStreamId: string): Promise<Record<string, number | null>> {
  const t0 = performance.now();
  const store = await TraceStore.open(dir, { autoCompact: false });
  const openMs = performance.now() - t0;
  const rssOpen = rssNow();
  const spans = (await store.count('span', projectId, { log_stream_id: logStreamId })).total_count;
  const firstMs = performance.now() - t0;
  const rss = rssNow();
  await store.close({ seal: false });
  return { open_ms: openMs, first_answer_ms: firstMs, rss_after_open_mib: rssOpen, rss_after_first_answer_mib: rss, spans };
}

function openInChild(dir: string, info: TemplateInfo): Promise<Record<string, number>> {
  return jsonFromChild(import.meta.url, ['open', dir, info.projectId, info.logStreamId]);
}

/** Request bodies of `spans` spans in 1,000-span requests, ids as the generator gives them (new to the template). */
function bodies(logStreamId: string, spans: number): { json: string; spans: number }[] {
  const out: { json: string; spans: number }[] = [];
  for (const batch of generateBatches({ spans, batchSpans: 1000, seed: 4242, startTime: Date.UTC(2027, 0, 1) }))
    out.push({
      json: JSON.stringify({ log_stream_id: logStreamId, reliable: true, traces: batch }),
      spans: batch.reduce((n: number, t: GenTrace) => n + countSpans(t), 0),
    });
  return out;
}

export async function benchCosts(opts: { dataDir: string; runs: number; logSpans: number; work?: string }): Promise<Measurement[]> {
  const info = JSON.parse(readFileSync(join(opts.dataDir, 'built.json'), 'utf8')) as TemplateInfo;
  // Beside the template: hard links need the same file system.
  const work = opts.work ?? mkdtempSync(join(dirname(opts.dataDir), 'costs-'));
  const dir = join(work, 'tracelake');
  const say = (s: string) => process.stderr.write(`costs: ${s}\n`);
  const out: Measurement[] = [];
  try {
    copyStore(join(opts.dataDir, 'tracelake'), dir);
    const lib = await openInChild(dir, info);
    say(`library open ${JSON.stringify(lib)}`);
    out.push(
      {
        name: 'library open, writable, to the first answer',
        value: lib['first_answer_ms']!,
        unit: 'ms',
        open_ms: lib['open_ms'],
        spans: lib['spans'],
      },
      {
        name: 'library RSS after the first answer',
        value: lib['rss_after_first_answer_mib']!,
        unit: 'MiB',
        after_open_mib: lib['rss_after_open_mib'],
      },
    );

    const key = `tl_bench_${Date.now()}`;
    const t0 = performance.now();
    const server = await startServer(dir, key, { args: ['--no-merges'] });
    const post = poster(server, key);
    const base = `/projects/${info.projectId}`;
    const stream = { log_stream_id: info.logStreamId };
    const total = Number((await post(`${base}/spans/count`, stream))['total_count']);
    out.push(
      { name: 'server start to the first answer (HTTP count)', value: performance.now() - t0, unit: 'ms', spans: total },
      { name: 'server RSS after the first answer', value: statusMiB(server.pid, 'VmRSS') ?? Number.NaN, unit: 'MiB' },
    );
    say(`server first answer, ${total} spans`);

    // Sampled every 100 ms: the peak over all questions, and each question's own (which one costs memory).
    let peakSampled = 0;
    let peakOfQuestion = 0;
    const sampler = setInterval(() => {
      const now = statusMiB(server.pid, 'VmRSS') ?? 0;
      peakSampled = Math.max(peakSampled, now);
      peakOfQuestion = Math.max(peakOfQuestion, now);
    }, 100);
    for (const q of QUESTIONS.filter((x) => !x.mutates)) {
      const call = q.api(q.variants[0]!);
      const times: number[] = [];
      peakOfQuestion = statusMiB(server.pid, 'VmRSS') ?? 0;
      for (let r = 0; r < opts.runs; r++) {
        const q0 = performance.now();
        await post(`${base}/${call.level}/${call.op}`, { ...call.body, ...stream });
        times.push(performance.now() - q0);
      }
      const rest = times.slice(1);
      out.push({
        name: `HTTP: ${q.title}`,
        value: times[0]!,
        unit: 'ms',
        again_median_ms: rest.length > 0 ? median(rest) : null,
        runs: opts.runs,
        server_rss_peak_mib: peakOfQuestion,
      });
      say(
        `${q.id}: first ${times[0]!.toFixed(0)} ms, then ${rest.map((t) => t.toFixed(0)).join('/')}; server RSS peak ${peakOfQuestion} MiB`,
      );
    }
    const del = QUESTIONS.find((x) => x.mutates)!;
    const dcall = del.api(del.variants[0]!);
    peakOfQuestion = statusMiB(server.pid, 'VmRSS') ?? 0;
    const d0 = performance.now();
    // The API answers a delete with a message only ("Deleted N records").
    const answer = String((await post(`${base}/${dcall.level}/${dcall.op}`, { ...dcall.body, ...stream }))['message']);
    const deleted = Number(/Deleted (\d+)/.exec(answer)?.[1] ?? Number.NaN);
    out.push({ name: `HTTP: ${del.title}`, value: performance.now() - d0, unit: 'ms', deleted, server_rss_peak_mib: peakOfQuestion });
    say(`delete ${deleted} in ${(performance.now() - d0).toFixed(0)} ms`);
    clearInterval(sampler);
    out.push({
      name: 'server peak RSS while answering (VmHWM, from start)',
      value: statusMiB(server.pid, 'VmHWM') ?? Number.NaN,
      unit: 'MiB',
      sampled_peak_mib: peakSampled,
    });

    // Logging into the large store, then the stop right after it.
    const pool = bodies(info.logStreamId, opts.logSpans);
    let next = 0;
    let logged = 0;
    const l0 = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let b = pool[next++]; b !== undefined; b = pool[next++]) {
          await post(`${base}/traces`, b.json);
          logged += b.spans;
        }
      }),
    );
    const logSeconds = (performance.now() - l0) / 1000;
    out.push({
      name: 'HTTP ingest into the store, 4 clients, 1,000-span requests',
      value: logged / logSeconds,
      unit: 'spans/s',
      spans: logged,
    });
    const s0 = performance.now();
    await server.stop();
    out.push({ name: 'stop (SIGTERM) right after the last acknowledgement', value: performance.now() - s0, unit: 'ms' });
    say(`logged ${logged} spans at ${(logged / logSeconds).toFixed(0)}/s; stopped`);

    const again = await openInChild(dir, info);
    out.push({
      name: 'the next library open (replays the log) to the first answer',
      value: again['first_answer_ms']!,
      unit: 'ms',
      spans: again['spans'],
      expected_spans: total - deleted + logged,
      rss_mib: again['rss_after_first_answer_mib'],
    });
    if (again['spans'] !== total - deleted + logged)
      throw new Error(`after the stop ${again['spans']} spans, expected ${total - deleted + logged}`);
    return out;
  } finally {
    if (opts.work === undefined) rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      runs: { type: 'string', default: '3' },
      'log-spans': { type: 'string', default: '100000' },
      work: { type: 'string' },
      out: { type: 'string', default: 'bench/results' },
    },
  });
  if (positionals[0] === 'open') {
    const [, dir, projectId, logStreamId] = positionals as [string, string, string, string];
    process.stdout.write(`${JSON.stringify(await openOnce(dir, projectId, logStreamId))}\n`);
  } else {
    if (values['data-dir'] === undefined) throw new Error('--data-dir D (a template folder with built.json) is required');
    const r = await benchCosts({
      dataDir: values['data-dir'],
      runs: Number(values.runs),
      logSpans: Number(values['log-spans']),
      ...(values.work ? { work: values.work } : {}),
    });
    const info = JSON.parse(readFileSync(join(values['data-dir'], 'built.json'), 'utf8')) as TemplateInfo;
    for (const m of r) process.stdout.write(`${m.name}: ${Math.round(m.value)} ${m.unit}\n`);
    process.stderr.write(`wrote ${writeResults(values.out!, `costs-${info.spans}`, { machine: machine(), results: r })}\n`);
  }
}
