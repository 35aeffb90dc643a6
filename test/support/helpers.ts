// Shared test plumbing: temporary data folders, a store with a project and log stream, and a real
// server listening on an ephemeral loopback port with an API key.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { Database } from '../../src/db/database.js';
import { TraceStore, type TraceStoreOptions } from '../../src/engine/trace-store.js';
import { RecordStore, type RecordStoreOptions } from '../../src/storage/record-store.js';
import type { LogRow } from '../../src/record/record.js';
import type { ManifestState } from '../../src/storage/manifest/manifest.js';
import { buildServer, type ServerOptions } from '../../src/server/build-server.js';

// Temporary folders are removed when the test process exits, after every store a test opened (in
// any order of t.after hooks) has been closed.
const folders: string[] = [];
process.on('exit', () => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(_t?: TestContext, prefix = 'tracelake-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  folders.push(dir);
  return dir;
}

/** Project and run of the rows `toolRows` makes, for record-store tests. */
/** A store folder's manifest as it is on disk now. */
export const manifestOf = (dir: string): ManifestState => JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ManifestState;

export const ROWS_PROJECT = '11111111-1111-4111-8111-111111111111';
export const ROWS_RUN = '22222222-2222-4222-8222-222222222222';
/** The id of row k of `toolRows`. */
export const rowId = (k: number): string => `00000000-0000-4000-8000-${String(k).padStart(12, '0')}`;

/** Flat tool rows k = from .. from + n - 1 (each its own trace, created_at one µs apart), named `${name}${k}`. */
export function toolRows(from: number, n: number, { name = 'r', input = 'x' }: { name?: string; input?: string } = {}): LogRow[] {
  return Array.from({ length: n }, (_, i) => {
    const k = from + i;
    const id = rowId(k);
    return {
      seq: 0,
      id,
      type: 'tool',
      project_id: ROWS_PROJECT,
      run_id: ROWS_RUN,
      trace_id: id,
      name: `${name}${k}`,
      input,
      created_at: 1_700_000_000_000_000 + k,
      updated_at: 0,
      is_complete: true,
      has_children: false,
    };
  });
}

/** A bare record store (no catalog) over its own DuckDB, without background merges unless `options` ask for them; closed after the test. */
export async function openRecordStore(
  t: TestContext,
  options: RecordStoreOptions = {},
): Promise<{ dir: string; db: Database; store: RecordStore }> {
  const dir = tempDir(t);
  const db = await Database.open({ tempDirectory: join(dir, 'tmp') });
  const store = await RecordStore.open(dir, db, { autoCompact: false, ...options });
  t.after(async () => {
    await store.close();
    await db.close();
  });
  return { dir, db, store };
}

export interface StoreFixture {
  dir: string;
  store: TraceStore;
  projectId: string;
  logStreamId: string;
}

export async function openStore(t: TestContext, options: TraceStoreOptions = {}, given?: string): Promise<StoreFixture> {
  const dir = given ?? tempDir(t);
  const store = await TraceStore.open(dir, options);
  t.after(() => store.close());
  const project = store.createProject({ name: 'test-project' });
  const stream = store.createLogStream(project.id, 'default');
  return { dir, store, projectId: project.id, logStreamId: stream.id };
}

/** A store holding `traces` (flushed) and its whole export as Parquet in a fresh folder (`dir`). */
export async function parquetExportOf(t: TestContext, traces: readonly unknown[]): Promise<{ dir: string; plain: string }> {
  const src = await openStore(t);
  await src.store.logTraces(src.projectId, { log_stream_id: src.logStreamId, traces: traces as never });
  await src.store.flush();
  const dir = tempDir(t);
  const plain = join(dir, 'plain.parquet');
  await src.store.data.exportFile(src.projectId, plain, { format: 'parquet' });
  return { dir, plain };
}

export interface ServerFixture extends StoreFixture {
  url: string;
  key: string;
  /** fetch JSON with the API key; returns status and parsed body. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
}

/** A fetch of `${url}${path}` with the API key: JSON bodies out (strings sent as they are), status and
 * parsed body back (the text when it is not JSON). */
export function jsonCaller(url: string, key: string): ServerFixture['call'] {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'Galileo-API-Key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, body: parsed };
  };
}

export async function startServer(
  t: TestContext,
  options: { bodyLimit?: number; store?: TraceStoreOptions; viewer?: ServerOptions['viewer']; otlpMaxPendingBytes?: number } = {},
): Promise<ServerFixture> {
  const fx = await openStore(t, options.store);
  // The caller owns the fixture project (a plain user, not an admin: access rules apply as in real use).
  const user = fx.store.users.create({ email: `u${Date.now()}@test` });
  fx.store.catalog.addProjectMember(fx.projectId, user.id, 'owner');
  const key = fx.store.users.createApiKey(user.id).key;
  const app = buildServer({
    store: fx.store,
    ...(options.bodyLimit ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.viewer !== undefined ? { viewer: options.viewer } : {}),
    ...(options.otlpMaxPendingBytes ? { otlpMaxPendingBytes: options.otlpMaxPendingBytes } : {}),
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close()); // runs after the store's hook: close() of a closed store is a no-op, and app.close waits for requests
  const call = jsonCaller(url, key);
  return { ...fx, url, key, call };
}

/** A trace with one span of every kind, nested, in the shape the official client sends. */
export function everyKindTrace(tag = 'x'): Record<string, unknown> {
  return {
    type: 'trace',
    name: `trace-${tag}`,
    input: `question ${tag}`,
    output: `answer ${tag}`,
    created_at: '2026-03-01T10:00:00.000Z',
    tags: ['t1', tag],
    user_metadata: { env: 'test', n: 3 },
    metrics: { duration_ns: 5_000_000 },
    spans: [
      {
        type: 'agent',
        name: 'planner',
        agent_type: 'planner',
        input: 'plan it',
        created_at: '2026-03-01T10:00:00.100Z',
        spans: [
          {
            type: 'llm',
            name: 'chat',
            input: [
              { role: 'system', content: 'be brief' },
              { role: 'user', content: `say ${tag}` },
            ],
            output: { role: 'assistant', content: `${tag}!` },
            model: 'gpt-4o',
            temperature: 0.2,
            finish_reason: 'stop',
            tools: [{ type: 'function', function: { name: 'calc' } }],
            metrics: { num_input_tokens: 12, numOutputTokens: 3, custom_score: 0.75, label: 'good' },
            created_at: '2026-03-01T10:00:00.200Z',
          },
          {
            type: 'workflow',
            name: 'lookup',
            input: 'find docs',
            created_at: '2026-03-01T10:00:00.300Z',
            spans: [
              {
                type: 'retriever',
                name: 'search',
                input: 'docs about x',
                output: [{ page_content: 'doc one', metadata: { score: 0.9 } }, { content: 'doc two' }],
                created_at: '2026-03-01T10:00:00.310Z',
              },
              { type: 'tool', name: 'calc', input: '{"a":1}', output: '2', tool_call_id: 'call-1', created_at: '2026-03-01T10:00:00.320Z' },
            ],
          },
          {
            type: 'control',
            name: 'guard',
            input: 'check',
            control_id: 7,
            agent_name: 'planner',
            check_stage: 'post',
            applies_to: 'llm_call',
            evaluator_name: 'pii',
            selector_path: '$.output',
            created_at: '2026-03-01T10:00:00.400Z',
          },
        ],
      },
    ],
  };
}
