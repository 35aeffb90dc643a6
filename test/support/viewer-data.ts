// Data for the viewer's browser tests, logged through the real HTTP API: generated sessions of
// agent traces, a trace with one span of every kind, a trace full of HTML and script payloads, an
// experiment, a second project, and (on request) one trace of thousands of spans.
import { generateTraceSet } from './generator.js';
import { everyKindTrace, type ServerFixture } from './helpers.js';

/** Markup that would run script if any of it were ever parsed as HTML. */
export const XSS = {
  img: '<img src=x onerror="window.__xss=1;alert(1)">',
  script: '<script>window.__xss=2</script>',
  svg: '<svg onload="window.__xss=3">',
} as const;

export interface ViewerData {
  projectId: string;
  logStreamId: string;
  experimentId: string;
  everyKindTraceId: string;
  xssTraceId: string;
  /** A session holding several traces, and their ids oldest first. */
  sessionId: string;
  sessionTraceIds: string[];
}

async function post(fx: ServerFixture, path: string, body: unknown): Promise<any> {
  const res = await fx.call('POST', path, body);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export async function seedViewerData(fx: ServerFixture): Promise<ViewerData> {
  const { store, projectId, logStreamId } = fx;
  store.catalog.renameProject(projectId, 'support-bot');
  store.catalog.renameRun(projectId, logStreamId, 'production');
  const p = `/v2/projects/${projectId}`;

  const { traces } = generateTraceSet({ spans: 900, seed: 20261122, startTime: Date.UTC(2026, 10, 20, 9) });
  await post(fx, `${p}/traces`, { log_stream_id: logStreamId, traces });

  // The helper's trace, moved in time next to the generated ones.
  const every = JSON.parse(
    JSON.stringify({ ...everyKindTrace('refund'), name: 'refund request' }).replaceAll('2026-03-01T', '2026-11-21T'),
  ) as Record<string, unknown>;
  const everyRes = await post(fx, `${p}/traces`, { log_stream_id: logStreamId, traces: [every], include_trace_ids: true });

  // Older than everything else, so the first page of the table looks ordinary in screenshots.
  const xss = {
    type: 'trace',
    name: `render ${XSS.img}`,
    input: XSS.script,
    output: XSS.svg,
    created_at: '2026-11-19T11:00:00.000Z',
    tags: ['<b>bold</b>'],
    user_metadata: { note: XSS.img },
    spans: [
      {
        type: 'llm',
        name: 'chat with markup',
        input: [
          { role: 'system', content: 'Answer in plain text.' },
          { role: 'user', content: `Please show ${XSS.img} and ${XSS.script}` },
        ],
        output: { role: 'assistant', content: `Here it is: ${XSS.img}` },
        model: 'gpt-4o',
        metrics: { num_input_tokens: 20, num_output_tokens: 8, num_total_tokens: 28, duration_ns: 420_000_000 },
        created_at: '2026-11-19T11:00:00.100Z',
      },
      {
        type: 'retriever',
        name: 'docs',
        input: XSS.svg,
        output: [{ content: XSS.img, metadata: { source: XSS.script } }],
        created_at: '2026-11-19T11:00:00.600Z',
      },
    ],
  };
  const xssRes = await post(fx, `${p}/traces`, { log_stream_id: logStreamId, traces: [xss], include_trace_ids: true });

  const experiment = store.catalog.createExperiment(projectId, 'prompt-v2');
  const { traces: expTraces } = generateTraceSet({ spans: 60, seed: 7, startTime: Date.UTC(2026, 10, 19) });
  await post(fx, `${p}/traces`, { experiment_id: experiment.id, traces: expTraces });

  const other = store.createProject({ name: 'batch-jobs' });
  store.catalog.addProjectMember(other.id, (await fx.call('GET', '/v2/current_user')).body.id, 'owner');
  store.createLogStream(other.id, 'nightly');

  // The generated session with the most traces.
  const bySession = new Map<string, { id: string; at: string }[]>();
  for (const t of traces) bySession.set(t.session_id, [...(bySession.get(t.session_id) ?? []), { id: t.id, at: t.created_at }]);
  const [sessionId, sessionTraces] = [...bySession].sort((a, b) => b[1].length - a[1].length)[0]!;
  return {
    projectId,
    logStreamId,
    experimentId: experiment.id,
    everyKindTraceId: everyRes.trace_ids[0],
    xssTraceId: xssRes.trace_ids[0],
    sessionId,
    sessionTraceIds: sessionTraces.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id)).map((t) => t.id),
  };
}

/**
 * One trace of `spans` spans: a root agent with workflows of 99 steps each (llm, tool and
 * retriever spans, some with a nested tool), timed one after another.
 */
export async function logBigTrace(fx: ServerFixture, spans: number): Promise<string> {
  const t0 = Date.UTC(2026, 10, 22, 8);
  let n = 0;
  const at = () => new Date(t0 + n * 5).toISOString();
  const leaf = (): Record<string, unknown> => {
    n++;
    const kind = n % 3;
    if (kind === 0)
      return {
        type: 'llm',
        name: `call model ${n}`,
        input: [{ role: 'user', content: `step ${n}` }],
        output: { role: 'assistant', content: `done ${n}` },
        created_at: at(),
        metrics: { duration_ns: 4_000_000, num_input_tokens: 12, num_output_tokens: 4, num_total_tokens: 16 },
      };
    if (kind === 1)
      return { type: 'tool', name: `lookup ${n}`, input: `q${n}`, output: `r${n}`, created_at: at(), metrics: { duration_ns: 3_000_000 } };
    return {
      type: 'retriever',
      name: `search ${n}`,
      input: `q${n}`,
      output: [{ content: `doc ${n}` }],
      created_at: at(),
      metrics: { duration_ns: 2_000_000 },
    };
  };
  const workflows: Record<string, unknown>[] = [];
  n++; // the root agent
  const root: Record<string, unknown> = { type: 'agent', name: 'big agent', input: 'go', created_at: at(), spans: workflows };
  while (n < spans) {
    n++;
    const w: Record<string, unknown> = {
      type: 'workflow',
      name: `workflow ${workflows.length + 1}`,
      input: 'step',
      created_at: at(),
      spans: [],
    };
    workflows.push(w);
    for (let i = 0; i < 99 && n < spans; i++) (w['spans'] as unknown[]).push(leaf());
  }
  const trace = {
    type: 'trace',
    name: `trace of ${spans} spans`,
    input: 'a big one',
    output: 'done',
    created_at: new Date(t0).toISOString(),
    metrics: { duration_ns: n * 5_000_000 },
    spans: [root],
  };
  const res = await post(fx, `/v2/projects/${fx.projectId}/traces`, {
    log_stream_id: fx.logStreamId,
    traces: [trace],
    include_trace_ids: true,
  });
  return res.trace_ids[0];
}
