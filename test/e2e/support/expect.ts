// Field-by-field comparison of what the official client put on the wire (recorded by the proxy) with
// what tracelake's own API returns for it, hierarchy included.
import assert from 'node:assert/strict';
import type { RecordedRequest } from './harness.js';
import type { Tracelake } from './harness.js';

type Rec = Record<string, any>;

/**
 * camelCase metric keys the batch path (galileo 1.33, Speakeasy) sends un-converted, as tracelake
 * stores them: the LLM metrics the clients know are stored snake_case; any other key
 * is stored exactly as sent.
 */
export const METRIC_KEYS: Record<string, string> = {
  numReasoningTokens: 'num_reasoning_tokens',
  numCachedInputTokens: 'num_cached_input_tokens',
};

export function expectedMetrics(sent: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(sent ?? {})) if (v !== null && v !== undefined) out[METRIC_KEYS[k] ?? k] = v;
  return out;
}

/** Request bodies of POST /projects/{id}/traces among `requests`. */
/**
 * The failures the helpers flow provokes on purpose: the project that does not exist (its log streams
 * are asked for), a search on a column that does not exist, a scorer version that does not exist.
 */
export function helperLookupFailure(missingProjectId: string): (r: RecordedRequest) => boolean {
  return (r) =>
    (r.status === 404 && r.path.includes(missingProjectId)) ||
    (r.status === 422 && r.route === '/projects/{id}/spans/search' && JSON.stringify(r.body).includes('no_such_column')) ||
    (r.status === 404 && r.route === '/scorers/{id}/version' && r.query['version'] === '99');
}

export function tracesPosted(requests: RecordedRequest[]): Rec[] {
  return requests.filter((r) => r.method === 'POST' && /^\/projects\/[^/]+\/traces$/.test(r.path)).map((r) => r.body as Rec);
}

export interface TreeContext {
  projectId: string;
  runId: string;
  sessionId: string;
  /** The client sent ids (1.33+) or the server minted them (1.32). */
  clientIds: boolean;
}

/**
 * `stored` is a trace from GET /projects/{id}/traces/{trace_id} (spans nested), `sent` the trace as
 * the client posted it. Every field the client sent must come back as sent (metric key spellings
 * aside, see METRIC_KEYS), and the links must follow the nesting.
 */
export function assertTraceMatches(stored: Rec, sent: Rec, ctx: TreeContext): void {
  const path = `trace ${sent['name']}`;
  assertStepMatches(stored, sent, path, ctx);
  assert.equal(stored['trace_id'], stored['id'], `${path}: trace_id`);
  assert.equal(stored['session_id'], ctx.sessionId, `${path}: session_id`);
  assertChildren(stored, sent, stored['id'], stored['id'], path, ctx);
}

function assertChildren(stored: Rec, sent: Rec, traceId: string, parentId: string, path: string, ctx: TreeContext): void {
  const want = (sent['spans'] ?? []) as Rec[];
  const got = (stored['spans'] ?? []) as Rec[];
  assert.equal(got.length, want.length, `${path}: number of child spans`);
  assert.equal(stored['has_children'], want.length > 0, `${path}: has_children`);
  want.forEach((w, i) => {
    const g = got[i]!;
    const p = `${path} > ${w['type']} ${w['name']}`;
    assertStepMatches(g, w, p, ctx);
    assert.equal(g['trace_id'], traceId, `${p}: trace_id`);
    assert.equal(g['parent_id'], parentId, `${p}: parent_id`);
    assert.equal(g['session_id'], ctx.sessionId, `${p}: session_id`);
    assert.equal(typeof g['step_number'], 'number', `${p}: step_number`);
    if (i > 0) assert.ok(g['step_number'] > got[i - 1]!['step_number'], `${p}: step order follows the client's order`);
    assertChildren(g, w, traceId, g['id'], p, ctx);
  });
}

function assertStepMatches(g: Rec, w: Rec, p: string, ctx: TreeContext): void {
  if (ctx.clientIds) assert.equal(g['id'], w['id'], `${p}: id`);
  else assert.match(String(g['id']), /^[0-9a-f-]{36}$/, `${p}: minted id`);
  assert.equal(g['type'], w['type'], `${p}: type`);
  assert.equal(g['project_id'], ctx.projectId, `${p}: project_id`);
  assert.equal(g['run_id'], ctx.runId, `${p}: run_id`);
  assert.equal(g['name'], w['name'] ?? '', `${p}: name`);
  assert.deepEqual(g['input'], w['input'], `${p}: input`);
  assert.deepEqual(g['output'], w['output'] ?? null, `${p}: output`);
  assert.equal(g['created_at'], w['created_at'], `${p}: created_at`);
  assert.match(String(g['updated_at']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, `${p}: updated_at`);
  assert.deepEqual(g['user_metadata'], w['user_metadata'] ?? {}, `${p}: user_metadata (stored as sent)`);
  assert.deepEqual(g['dataset_metadata'], w['dataset_metadata'] ?? {}, `${p}: dataset_metadata`);
  assert.deepEqual(g['tags'], w['tags'] ?? [], `${p}: tags`);
  assert.deepEqual(g['metrics'], expectedMetrics(w['metrics']), `${p}: metrics`);
  assert.equal(g['status_code'], w['status_code'] ?? null, `${p}: status_code`);
  assert.equal(g['is_complete'], true, `${p}: is_complete`);
  switch (w['type']) {
    case 'llm':
      assert.equal(g['model'], w['model'] ?? null, `${p}: model`);
      assert.equal(g['temperature'], w['temperature'] ?? null, `${p}: temperature`);
      assert.deepEqual(g['tools'], w['tools'] ?? null, `${p}: tools`);
      assert.equal(g['finish_reason'], w['finish_reason'] ?? null, `${p}: finish_reason`);
      break;
    case 'tool':
      assert.equal(g['tool_call_id'], w['tool_call_id'] ?? w['toolCallId'] ?? null, `${p}: tool_call_id`);
      break;
    case 'agent':
      assert.equal(g['agent_type'], w['agent_type'] ?? 'default', `${p}: agent_type`);
      break;
    default:
      break;
  }
}

/** Project and log stream ids by name, through tracelake's API. */
export async function findRun(tl: Tracelake, projectName: string, streamName: string): Promise<{ projectId: string; runId: string }> {
  const projects = await tl.call('GET', `/projects?project_name=${encodeURIComponent(projectName)}`);
  assert.equal(projects.status, 200);
  assert.equal(projects.body.length, 1, `one project named ${projectName}`);
  const projectId = projects.body[0].id as string;
  const streams = await tl.call('GET', `/projects/${projectId}/log_streams`);
  const run = (streams.body as Rec[]).find((s) => s['name'] === streamName);
  assert.ok(run, `log stream ${streamName} exists`);
  return { projectId, runId: run['id'] as string };
}

/** Every record of a level in a run (one page of up to 1000). */
export async function records(
  tl: Tracelake,
  projectId: string,
  runId: string,
  level: 'spans' | 'traces' | 'sessions',
  filters: unknown[] = [],
): Promise<Rec[]> {
  const r = await tl.call('POST', `/projects/${projectId}/${level}/search`, {
    log_stream_id: runId,
    filters,
    limit: 1000,
    sort: { column_id: 'created_at', ascending: true },
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.records as Rec[];
}

export async function getTree(tl: Tracelake, projectId: string, level: 'traces' | 'sessions' | 'spans', id: string): Promise<Rec> {
  const r = await tl.call('GET', `/projects/${projectId}/${level}/${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as Rec;
}
