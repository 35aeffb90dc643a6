// What the server's JSON body parser costs against Fastify's default one: two Fastify apps with the
// server's validator, one POST route checked against LogTracesBody and answering {}, fed the same
// ~1,000-span log-traces bodies by inject (no socket), taking turns pass by pass. Reports process CPU
// (every thread) per span for each, and their ratio. The handler does nothing: the difference is the
// parse, the walk and the check.
// `ascii`: every character past ASCII sent as a \\u escape (what Python's json.dumps writes).
// TL_OTHER=<checkout>: that build's parser takes turns too (as "other").
//   node dist/bench/probes/json-body-cost.js [spans=50000] [passes=6] [ascii]
import Fastify, { type FastifyInstance } from 'fastify';
import { LogTracesBody } from '../../src/schemas/ingest.js';
import { installJsonParser } from '../../src/server/json-body.js';
import { validatorCompiler } from '../../src/server/validation.js';
import { generateBatches } from '../../test/support/generator.js';

const total = Number(process.argv[2] ?? 50_000);
const passes = Number(process.argv[3] ?? 6);
const ascii = process.argv[4] === 'ascii';
const asSent = (text: string) =>
  ascii ? text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
const bodies: string[] = [];
let spans = 0;
const count = (x: { spans?: unknown[] }): number => ((x.spans ?? []) as { spans?: unknown[] }[]).reduce((n, s) => n + 1 + count(s), 0);
for (const batch of generateBatches({ spans: total, batchSpans: 1000, seed: 11 })) {
  bodies.push(asSent(JSON.stringify({ log_stream_id: '22222222-2222-4222-8222-222222222222', reliable: true, traces: batch })));
  spans += batch.reduce((n, t) => n + count(t as { spans?: unknown[] }), 0);
}

type Install = typeof installJsonParser;
async function app(install: Install | null, validator = validatorCompiler): Promise<FastifyInstance> {
  const a = Fastify({ bodyLimit: 64 * 1024 * 1024 });
  a.setValidatorCompiler(validator);
  install?.(a);
  a.post('/traces', { schema: { body: LogTracesBody } }, async () => ({}));
  await a.ready();
  return a;
}
// The other build's validator too: its parser notes depths where its own schema check looks.
const other = process.env['TL_OTHER'];
const sides: Record<string, FastifyInstance> = {
  fastify_default: await app(null),
  ...(other
    ? {
        other: await app(
          ((await import(`${other}/dist/src/server/json-body.js`)) as { installJsonParser: Install }).installJsonParser,
          ((await import(`${other}/dist/src/server/validation.js`)) as { validatorCompiler: typeof validatorCompiler }).validatorCompiler,
        ),
      }
    : {}),
  own: await app(installJsonParser),
};
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const us: Record<string, number[]> = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let p = 0; p < passes + 1; p++) {
  for (const [name, a] of Object.entries(sides)) {
    const c = cpu();
    for (const payload of bodies) {
      const res = await a.inject({ method: 'POST', url: '/traces', headers: { 'content-type': 'application/json' }, payload });
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    }
    // The first pass warms both up.
    if (p > 0) us[name]!.push(Math.round(((cpu() - c) / spans) * 1e8) / 100);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(
  JSON.stringify({
    load: (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim(),
    spans,
    ascii,
    cpu_us_per_span: us,
    median: Object.fromEntries(Object.entries(us).map(([k, v]) => [k, median(v)])),
    own_over_default: Math.round((median(us['own']!) / median(us['fastify_default']!)) * 100) / 100,
  }),
);
