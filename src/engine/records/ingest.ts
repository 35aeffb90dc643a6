// Logging: whole traces, spans under a parent, explicit sessions and streaming updates, as records of
// one run. Keeps what streaming clients need between requests: next step numbers and stand-in traces
// whose spans came first (parents still awaited are kept, durably, by the record store). Records are
// written through the record store.
import type { Catalog, Project, Run } from '../../catalog/catalog.js';
import type { Database } from '../../db/database.js';
import { invalid, NotFoundError } from '../../errors.js';
import { addCosts, type PriceLookup } from '../../ingest/cost.js';
import { flattenSpans, flattenTraces, type FlatTraces } from '../../ingest/flatten.js';
import { idSeed, implicitSessionId, newId } from '../../ingest/ids.js';
import { emptyRecord } from '../../ingest/normalize-node.js';
import { nowUs } from '../../record/time.js';
import { assertValid } from '../../schemas/check.js';
import {
  CreateSessionBody,
  LogSpansBody,
  LogTracesBody,
  UpdateRecordBody,
  type LogSpansRequest,
  type LogTracesRequest,
} from '../../schemas/ingest.js';
import type { RecordStore } from '../../storage/record-store.js';
import { cpuTurn } from '../../storage/memtable/cpu-turns.js';
import { KeyedLock } from './keyed-lock.js';
import { Sessions } from './sessions.js';
import type { OtlpHost } from '../otlp/otlp-log.js';
import type { RunIds } from '../run-scope.js';
import { markMintedFresh, placeDrafts, type Draft, type LogRow, type RecordLinks } from '../../record/record.js';
import { linksOf, storedToWire } from '../../record/row-codec.js';
import { EMPTY, sql } from '../../query/sql.js';

/** What logging needs from the store: the catalog, run resolution and the model prices costs come from. */
export interface IngestHost {
  readonly catalog: Catalog;
  resolveRun(projectId: string, ids: RunIds, loc?: (string | number)[]): { project: Project; run: Run; field: keyof RunIds };
  /** Prices of a project's models (model-prices.ts); without it no cost is computed. */
  prices?(projectId: string): PriceLookup;
}

export interface LogSpansResult {
  project_id: string;
  project_name: string;
  records_count: number;
  trace_id: string;
  parent_id: string;
  session_id: string | null;
  log_stream_id: string | null;
  experiment_id: string | null;
  metrics_testing_id: string | null;
}

export interface LogTracesResult {
  project_id: string;
  project_name: string;
  records_count: number;
  traces_count: number;
  spans_count: number;
  session_id: string | null;
  log_stream_id: string | null;
  experiment_id: string | null;
  metrics_testing_id: string | null;
  trace_ids: string[];
}

export class Ingest {
  readonly #host: IngestHost;
  readonly #records: RecordStore;
  readonly #db: Database;
  readonly #maxSpans: number | undefined;
  /** trace id -> next step number, for spans logged into an existing trace. */
  readonly #nextStep = new Map<string, number>();
  /**
   * Traces that Log spans created because their spans came first (run/trace id -> the session they got
   * and the updates since). Streaming clients send a trace's first spans, and sometimes its conclusion,
   * before the trace itself: Log traces then merges into this stand-in instead of replacing it.
   */
  readonly #provisional = new Map<string, Provisional>();
  /** Serialises the requests that read and rewrite records of one trace (run/trace id). */
  readonly #traceLock = new KeyedLock();
  readonly #sessions: Sessions;
  /** Told of every write once it is acknowledged, seqs assigned (online scoring queues what it owes). */
  onWritten: ((projectId: string, runId: string, rows: readonly LogRow[]) => void) | null = null;

  constructor(host: IngestHost, records: RecordStore, db: Database, maxSpans: number | undefined) {
    this.#host = host;
    this.#records = records;
    this.#db = db;
    this.#maxSpans = maxSpans;
    this.#sessions = new Sessions(records, db);
  }

  /**
   * Logs whole traces (the body the official client sends to POST /projects/{id}/traces). With an
   * idempotency key, minted ids come from the key, and a request whose traces are all logged already
   * (a retry) answers without logging again.
   */
  async logTraces(projectId: string, body: LogTracesRequest, key: string | null = null): Promise<LogTracesResult> {
    await cpuTurn();
    assertValid(LogTracesBody, body);
    const { project, run, field } = this.#host.resolveRun(projectId, body);
    const ctx = {
      projectId: project.id,
      runId: run.id,
      receivedUs: nowUs(),
      ...(this.#maxSpans ? { maxSpans: this.#maxSpans } : {}),
      ...(key !== null ? { idSeed: idSeed(key, project.id, run.id, 'traces') } : {}),
    };
    const flat = flattenTraces(body, ctx);
    return this.#traceLock.run(
      flat.traces.map((t) => `${run.id}/${t.record.id}`),
      () => this.#logFlatTraces(project, run, field, body, flat, key !== null),
    );
  }

  /** Whether every one of these ids has a live record in the run (a keyed request's retry). */
  async #allLogged(projectId: string, runId: string, ids: readonly string[]): Promise<boolean> {
    const found = new Set((await this.#records.lookup(projectId, runId, ids)).map((r) => r.id));
    return ids.every((id) => found.has(id));
  }

  async #logFlatTraces(
    project: Project,
    run: Run,
    field: keyof RunIds,
    body: LogTracesRequest,
    flat: FlatTraces,
    keyed: boolean,
  ): Promise<LogTracesResult> {
    const retried =
      keyed &&
      (await this.#allLogged(
        project.id,
        run.id,
        flat.traces.map((t) => t.record.id),
      ));
    const sessionRows = await this.#sessions.forTraces(project.id, run.id, flat.traces, body.session_external_id ?? null);
    const settled =
      this.#provisional.size > 0 && !retried
        ? await this.#settleProvisional(project.id, run.id, flat.traces)
        : { rows: [], orphanSessions: [] };
    const rows: Draft[] = [...settled.rows, ...sessionRows];
    let firstSession: string | null = null;
    const sessionOfTrace = new Map<string, string>();
    for (const t of flat.traces) {
      const sid = t.record['session_id'] as string;
      firstSession ??= sid;
      sessionOfTrace.set(t.record.id, sid);
      rows.push(t.record);
    }
    for (const s of flat.spans) {
      s['session_id'] = sessionOfTrace.get(s['trace_id'] as string);
      rows.push(s);
      const next = (s['step_number'] as number) + 1;
      const tid = s['trace_id'] as string;
      if ((this.#nextStep.get(tid) ?? 0) < next) this.#rememberStep(tid, next);
    }
    if (!retried) await this.write(project.id, run.id, rows, body.reliable !== false);
    for (const sid of settled.orphanSessions) await this.#sessions.dropUnused(project.id, run.id, sid);
    return {
      project_id: project.id,
      project_name: project.name,
      records_count: flat.traces.length + flat.spans.length,
      traces_count: flat.traces.length,
      spans_count: flat.spans.length,
      session_id: body.session_id ?? (flat.traces.length === 1 ? firstSession : null),
      ...runEcho(field, run.id),
      trace_ids: flat.traces.map((t) => t.record.id),
    };
  }

  /**
   * Logs spans under `parent_id` in trace `trace_id` (the API's Log spans). Creates the trace if new.
   * With an idempotency key, as logTraces: a retry whose spans are all logged answers without logging.
   */
  async logSpans(projectId: string, body: LogSpansRequest, key: string | null = null): Promise<LogSpansResult> {
    await cpuTurn();
    assertValid(LogSpansBody, body);
    const { project, run, field } = this.#host.resolveRun(projectId, body);
    const traceId = body.trace_id.toLowerCase();
    const seed = key === null ? null : idSeed(key, project.id, run.id, 'spans');
    return this.#traceLock.run([`${run.id}/${traceId}`], () => this.#logSpansLocked(project, run, field, body, traceId, seed));
  }

  async #logSpansLocked(
    project: Project,
    run: Run,
    field: keyof RunIds,
    body: LogSpansRequest,
    traceId: string,
    seed: string | null,
  ): Promise<LogSpansResult> {
    const parentId = body.parent_id.toLowerCase();
    const [trace, parent] = await this.#linkRows(project.id, run.id, traceId, parentId);
    if (trace && trace['type'] !== 'trace') {
      throw invalid(['body', 'trace_id'], `record ${traceId} is a ${String(trace['type'])} span, not a trace`, body.trace_id);
    }
    if (parentId !== traceId && !parent) {
      // Fire-and-forget clients (reliable: false) send spans concurrently: a child may overtake its
      // parent. It is kept, and the parent gets has_children when it arrives.
      if (body.reliable !== false)
        throw invalid(['body', 'parent_id'], `parent span ${parentId} was not found in trace ${traceId}`, body.parent_id);
    } else if (parentId !== traceId && parent) {
      if (parent['trace_id'] !== traceId) {
        throw invalid(
          ['body', 'parent_id'],
          `parent span ${parentId} belongs to trace ${String(parent['trace_id'])}, not ${traceId}`,
          body.parent_id,
        );
      }
      if (parent['type'] === 'llm' || parent['type'] === 'control') {
        throw invalid(['body', 'parent_id'], `a ${String(parent['type'])} span cannot have child spans`, body.parent_id);
      }
    }
    const receivedUs = nowUs();
    const firstStep = await this.#stepAfter(project.id, run.id, traceId, trace !== undefined);
    const spans = flattenSpans(
      body,
      {
        projectId: project.id,
        runId: run.id,
        receivedUs,
        ...(this.#maxSpans ? { maxSpans: this.#maxSpans } : {}),
        ...(seed !== null ? { idSeed: seed } : {}),
      },
      firstStep,
    );
    const answer = (sessionId: string): LogSpansResult => ({
      project_id: project.id,
      project_name: project.name,
      records_count: spans.length,
      trace_id: traceId,
      parent_id: parentId,
      session_id: sessionId,
      ...runEcho(field, run.id),
    });
    if (
      seed !== null &&
      trace &&
      (await this.#allLogged(
        project.id,
        run.id,
        spans.map((s) => s.id),
      ))
    )
      return answer(String(trace['session_id']));
    const rows: Draft[] = [];
    let sessionId: string;
    if (trace) {
      sessionId = String(trace['session_id']);
      if (!trace['has_children']) rows.push(await this.#withChildren(project.id, run.id, traceId, receivedUs));
    } else {
      const created = Math.min(...spans.map((s) => s.created_at));
      const record = emptyRecord(traceId, 'trace', created);
      record.trace_id = traceId;
      record.has_children = true;
      const sessions = await this.#sessions.forTraces(
        project.id,
        run.id,
        [{ record, sessionId: body.session_id?.toLowerCase() ?? null }],
        null,
      );
      rows.push(...sessions, record);
      sessionId = record['session_id'] as string;
      this.#provisional.set(`${run.id}/${traceId}`, { sessionId, updates: [] });
      if (this.#provisional.size > MAX_PENDING) this.#provisional.delete(this.#provisional.keys().next().value as string);
    }
    if (parent && parentId !== traceId && !parent['has_children'])
      rows.push(await this.#withChildren(project.id, run.id, parentId, receivedUs));
    for (const s of spans) {
      s['session_id'] = sessionId;
      rows.push(s);
    }
    this.#rememberStep(traceId, Math.max(firstStep, ...spans.map((s) => (s['step_number'] as number) + 1)));
    // The parent is awaited: logged with these rows, so it gets has_children when it arrives, even
    // after a restart (the record store keeps the id, see storage/awaited.ts).
    const awaits = parentId !== traceId && !parent ? [parentId] : [];
    await this.write(project.id, run.id, rows, body.reliable !== false, awaits);
    return answer(sessionId);
  }

  /**
   * Log traces for traces that Log spans had to create first (see #provisional): the logged trace
   * keeps its children (has_children) and the updates it got meanwhile (a conclusion that overtook
   * the trace), and when it names another session than the stand-in got, its spans already stored
   * move to that session and the stand-in's own implicit session is dropped (returned, to delete
   * after the write).
   */
  async #settleProvisional(
    projectId: string,
    runId: string,
    traces: readonly { record: Draft }[],
  ): Promise<{ rows: Draft[]; orphanSessions: string[] }> {
    const rows: Draft[] = [];
    const orphanSessions: string[] = [];
    for (const { record } of traces) {
      const k = `${runId}/${record.id}`;
      const prov = this.#provisional.get(k);
      if (!prov) continue;
      this.#provisional.delete(k);
      record.has_children = true;
      for (const u of prov.updates) applyUpdate(record, u);
      const sid = record['session_id'] as string;
      if (sid === prov.sessionId) continue;
      const ids = (
        await this.#sessions.scan({ projectId, runId, kinds: ['span'] }, (src) => sql`SELECT id FROM ${src} WHERE trace_id = ${record.id}`)
      ).map((r) => String(r['id']));
      const now = nowUs();
      for (const row of await this.#records.lookup(projectId, runId, ids))
        rows.push({ ...storedToWire(row), session_id: sid, updated_at: now });
      if (prov.sessionId === implicitSessionId(projectId, runId, record.id)) orphanSessions.push(prov.sessionId);
    }
    return { rows, orphanSessions };
  }

  /** Trace and parent of a Log spans request, from the recent-records map when possible. */
  async #linkRows(
    projectId: string,
    runId: string,
    traceId: string,
    parentId: string,
  ): Promise<[RecordLinks | undefined, RecordLinks | undefined]> {
    const ids = parentId === traceId ? [traceId] : [traceId, parentId];
    const known = new Map<string, RecordLinks>();
    const ask: string[] = [];
    for (const id of ids) {
      const e = this.#records.recent(runId, id);
      if (e) known.set(id, e);
      else if (this.#records.mayExist(projectId, runId, id)) ask.push(id);
    }
    for (const r of await this.#records.lookup(projectId, runId, ask)) known.set(r.id, linksOf(r));
    return [known.get(traceId), known.get(parentId)];
  }

  /** A new version of a record with has_children set (its first child just arrived). */
  async #withChildren(projectId: string, runId: string, id: string, nowUs: number): Promise<Draft> {
    const [row] = await this.#records.lookup(projectId, runId, [id]);
    if (!row) throw new NotFoundError(`record ${id} vanished while logging its children`);
    return { ...storedToWire(row), has_children: true, updated_at: nowUs };
  }

  /**
   * Creates a session explicitly (POST /projects/{id}/sessions); its run then reports user-created
   * sessions. With an idempotency key and no id, the id comes from the key, and a retry that finds the
   * session answers without logging it again.
   */
  async createSession(
    projectId: string,
    body: RunIds & {
      name?: string | null;
      previous_session_id?: string | null;
      external_id?: string | null;
      user_metadata?: Record<string, unknown> | null;
      id?: string | null;
    },
    key: string | null = null,
  ): Promise<{
    id: string;
    name: string | null;
    project_id: string;
    project_name: string;
    previous_session_id: string | null;
    external_id: string | null;
  }> {
    assertValid(CreateSessionBody, body);
    const { project, run } = this.#host.resolveRun(projectId, body);
    const id = body.id?.toLowerCase() ?? (key !== null ? idSeed(key, project.id, run.id, 'sessions') : newId());
    if (key !== null) {
      const [row] = await this.#records.lookup(project.id, run.id, [id]);
      if (row?.type === 'session')
        return {
          id,
          name: body.name ?? null,
          project_id: project.id,
          project_name: project.name,
          previous_session_id: row.previous_session_id ?? null,
          external_id: row.external_id ?? null,
        };
    }
    const now = nowUs();
    const session = emptyRecord(id, 'session', now);
    if (!body.id && key === null) markMintedFresh(session);
    session.name = body.name ?? '';
    if (body.previous_session_id) session.previous_session_id = body.previous_session_id.toLowerCase();
    if (body.external_id) session.external_id = body.external_id;
    if (body.user_metadata)
      session.user_metadata = Object.fromEntries(
        Object.entries(body.user_metadata).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
      );
    session.has_children = false;
    await this.write(project.id, run.id, [session], true);
    this.#host.catalog.markUserCreatedSession(run.id);
    return {
      id,
      name: body.name ?? null,
      project_id: project.id,
      project_name: project.name,
      previous_session_id: session.previous_session_id ?? null,
      external_id: session.external_id ?? null,
    };
  }

  /**
   * Updates a logged trace or span (the PATCH routes of streaming clients): the fields given replace the
   * stored ones (`duration_ns` goes to metrics.duration_ns); a new version of the record is written.
   */
  async updateRecord(
    level: 'trace' | 'span',
    projectId: string,
    id: string,
    patch: RunIds & {
      input?: unknown;
      output?: unknown;
      tags?: string[] | null;
      status_code?: number | null;
      is_complete?: boolean | null;
      duration_ns?: number | null;
      reliable?: boolean | null;
    },
  ): Promise<{
    project_id: string;
    project_name: string;
    session_id: string;
    records_count: number;
    log_stream_id: string | null;
    experiment_id: string | null;
    metrics_testing_id: string | null;
  }> {
    assertValid(UpdateRecordBody, patch);
    const { project, run, field } = this.#host.resolveRun(projectId, patch);
    const key = id.toLowerCase();
    const find = async () => {
      const [row] = await this.#records.lookup(project.id, run.id, [key]);
      if (!row || (level === 'trace' ? row['type'] !== 'trace' : row['type'] === 'trace' || row['type'] === 'session')) {
        throw new NotFoundError(`${level === 'trace' ? 'Trace' : 'Span'} ${id} not found`);
      }
      return row;
    };
    // Read, change and write under the lock of the record's trace (other requests may change it too).
    const traceId = level === 'trace' ? key : String((await find())['trace_id']);
    return this.#traceLock.run([`${run.id}/${traceId}`], async () => {
      const row = await find();
      const next = storedToWire(row);
      applyUpdate(next, patch);
      next.updated_at = nowUs();
      if (level === 'trace') this.#provisional.get(`${run.id}/${key}`)?.updates.push(patch);
      await this.write(project.id, run.id, [next], patch.reliable !== false);
      return {
        project_id: project.id,
        project_name: project.name,
        session_id: String(row['session_id']),
        records_count: 1,
        ...runEcho(field, run.id),
      };
    });
  }

  /** What the OpenTelemetry writer (otlp-log.ts) borrows: the same locks, lookups, sessions, steps and write. */
  otlpHost(): OtlpHost {
    return {
      lock: (keys, fn) => this.#traceLock.run(keys, fn),
      mayExist: (p, r, id) => this.#records.mayExist(p, r, id),
      lookup: (p, r, ids) => this.#records.lookup(p, r, ids),
      spanIds: (p, r, traceId, parentId) =>
        this.#records.read(async (snap) => {
          const src = snap.source({ projectId: p, runId: r, kinds: ['span'] });
          const byParent = parentId === undefined ? EMPTY : sql` AND parent_id = ${parentId}`;
          const rows = await this.#db.all(sql`SELECT id FROM ${src.sql} WHERE trace_id = ${traceId}${byParent}`);
          return rows.map((row) => String(row['id']));
        }),
      dropUnusedSession: (p, r, sessionId) => this.#sessions.dropUnused(p, r, sessionId),
      sessionRows: (p, r, traces) => this.#sessions.forTraces(p, r, traces, null),
      sessionsByExternalId: (p, r, externalIds) =>
        this.#sessions.byExternalIds(p, r, externalIds, this.#host.catalog.get<Run>('runs', r)?.has_user_created_sessions === true),
      stepAfter: (p, r, traceId, exists) => this.#stepAfter(p, r, traceId, exists),
      rememberStep: (traceId, next) => this.#rememberStep(traceId, next),
      write: (p, r, rows) => this.write(p, r, rows, true),
    };
  }

  async #stepAfter(projectId: string, runId: string, traceId: string, exists: boolean): Promise<number> {
    if (!exists) return 1;
    const cached = this.#nextStep.get(traceId);
    if (cached !== undefined) return cached;
    const rows = await this.#sessions.scan(
      { projectId, runId, kinds: ['span'] },
      (src) => sql`SELECT max(step_number) AS m FROM ${src} WHERE trace_id = ${traceId}`,
    );
    const m = rows[0]?.['m'];
    return m === null || m === undefined ? 1 : Number(m) + 1;
  }

  #rememberStep(traceId: string, next: number): void {
    this.#nextStep.delete(traceId);
    this.#nextStep.set(traceId, next);
    if (this.#nextStep.size > 100_000) this.#nextStep.delete(this.#nextStep.keys().next().value as string);
  }

  /** Writes records of one run; `awaits`: parent span ids the rows wait for (see RecordStore.append). */
  async write(projectId: string, runId: string, drafts: Draft[], reliable: boolean, awaits: readonly string[] = []): Promise<void> {
    placeDrafts(drafts, projectId, runId);
    // Every way in (logging, streaming updates, OTLP, imports of logging bodies) passes here: llm
    // records without a cost get one from their tokens and model (src/ingest/cost.ts).
    if (this.#host.prices) addCosts(drafts, this.#host.prices(projectId));
    try {
      // Not reliable: no fsync to wait for, and a failure is only logged.
      await this.#records.append(drafts, reliable, awaits);
    } catch (err) {
      if (reliable) throw err;
      process.emitWarning(`tracelake: unreliable ingest failed: ${(err as Error).message}`);
      return;
    }
    this.onWritten?.(projectId, runId, drafts);
  }

  /** Runs fn holding the locks of these traces (keys run/trace id), as logging does when it rewrites records. */
  lock<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    return this.#traceLock.run(keys, fn);
  }
}

/** Most stand-in traces remembered at once (the oldest are forgotten first). */
const MAX_PENDING = 100_000;

interface RecordUpdate {
  input?: unknown;
  output?: unknown;
  tags?: string[] | null;
  status_code?: number | null;
  is_complete?: boolean | null;
  duration_ns?: number | null;
}

interface Provisional {
  /** The session the stand-in trace (and the spans logged under it) got. */
  sessionId: string;
  /** PATCHes the stand-in received, applied again when the trace itself arrives. */
  updates: RecordUpdate[];
}

/** The fields an update (PATCH) gives replace the record's; `duration_ns` goes to metrics.duration_ns. */
function applyUpdate(next: Draft, patch: RecordUpdate): void {
  if (patch.input !== undefined && patch.input !== null) next.input = patch.input;
  if (patch.output !== undefined && patch.output !== null) next.output = patch.output;
  if (patch.tags != null) next.tags = patch.tags;
  if (patch.status_code != null) next.status_code = patch.status_code;
  if (patch.is_complete != null) next.is_complete = patch.is_complete;
  if (patch.duration_ns != null) next.metrics = { ...(next.metrics ?? {}), duration_ns: patch.duration_ns };
}

function runEcho(
  field: keyof RunIds,
  runId: string,
): { log_stream_id: string | null; experiment_id: string | null; metrics_testing_id: string | null } {
  return {
    log_stream_id: field === 'log_stream_id' ? runId : null,
    experiment_id: field === 'experiment_id' ? runId : null,
    metrics_testing_id: field === 'metrics_testing_id' ? runId : null,
  };
}
