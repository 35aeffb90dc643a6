// Scorers through the official client, unchanged: enableMetrics turns on the bleu preset and a scorer
// registered beforehand (args.registered) in the log stream, the logger sends traces whose llm spans
// carry a reference answer (datasetOutput), the flow waits until getSpans shows the computed metrics,
// reads them sorted and filtered by bleu, and asks recomputeMetrics for rouge over one span's name.
import { writeFileSync } from 'node:fs';

type Galileo = typeof import('galileo');
const args = JSON.parse(process.env['FLOW_ARGS'] ?? '{}') as { registered: string; projectName: string; logStream: string };
const g = (await import(process.env['GALILEO_PKG'] ?? 'galileo')) as Galileo;
const out: Record<string, unknown> = {};

out['enabled'] = (
  await g.enableMetrics({ projectName: args.projectName, logStreamName: args.logStream, metrics: ['bleu', args.registered] })
).length;

const ANSWERS = [
  ['It is sunny in Paris today.', 'It is sunny in Paris today.'],
  ['Rain is expected in Lyon tomorrow.', 'It will rain in Lyon tomorrow.'],
  ['No idea, sorry.', 'Snow is falling in Oslo right now.'],
];
await g.init();
const logger = g.getLogger();
ANSWERS.forEach(([answer, reference], i) => {
  // A single-span trace: the client puts datasetOutput on the trace and on its llm span.
  logger.addSingleLlmSpanTrace({
    input: `weather ${i}?`,
    output: answer!,
    datasetOutput: reference!,
    name: `answer-${i}`,
    model: 'gpt-4o',
  });
});
await g.flush();

const project = await g.getProject({ name: args.projectName });
const stream = await g.getLogStream({ name: args.logStream, projectName: args.projectName });
const llmOnly = [{ columnId: 'type', operator: 'eq', value: 'llm', type: 'text' }] as never;
const deadline = Date.now() + 30_000;
let spans: { records?: unknown[] } = {};
for (;;) {
  spans = (await g.getSpans({ projectId: project.id, logStreamId: stream.id, filters: llmOnly })) as typeof spans;
  const recs = (spans.records ?? []) as { metrics?: Record<string, unknown> }[];
  if (recs.length === ANSWERS.length && recs.every((r) => r.metrics?.['bleu'] !== undefined)) break;
  if (Date.now() > deadline) throw new Error(`metrics not computed in 30 s: ${JSON.stringify(recs.map((r) => r.metrics))}`);
  await new Promise((r) => setTimeout(r, 200));
}
out['spans'] = spans.records;
const sorted = (await g.getSpans({
  projectId: project.id,
  logStreamId: stream.id,
  filters: [{ columnId: 'metrics/bleu', operator: 'gte', value: 0.1, type: 'number' }] as never,
  sort: { columnId: 'metrics/bleu', ascending: false } as never,
})) as { records?: { name: string }[] };
out['sortedNames'] = (sorted.records ?? []).map((r) => r.name);

const rouge = (await g.getScorers({ names: ['rouge'] }))[0]!;
const client = new g.GalileoApiClient();
await client.init({ projectName: args.projectName, logStreamName: args.logStream });
out['job'] = await client.recomputeMetrics({
  scorerIds: [rouge.id],
  logStreamId: stream.id,
  filters: [{ columnId: 'name', operator: 'eq', value: 'answer-1', type: 'text' }],
} as never);
writeFileSync(process.env['FLOW_OUT']!, JSON.stringify(out));
