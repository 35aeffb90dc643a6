// Writing mapped OTel spans. OTel exporters send spans when they end, in batches, so a
// trace arrives in pieces: children usually before their parents, the root last, and the same
// batch again when an export is retried. Per log stream and trace, under the trace's lock:
//  - a span already stored is not written again (its id derives from the OTel ids): retries are no-ops;
//  - the trace record is created with the first piece (a stand-in: times from its spans) and takes
//    name, input, output, times and status from the root span when the root arrives;
//  - a span whose parent is not stored yet hangs under the trace; when the parent arrives, the
//    waiting children are moved under it (the waiting list is kept in memory, and after a restart
//    read back from the children's `otel.parent_span_id`); a parent that never arrives leaves them
//    under the trace;
//  - session.id / gen_ai.conversation.id name the trace's session by external id (one session per
//    id in the log stream, shared by every trace that names it); otherwise the trace gets its own.
import type { Project, Run } from '../../catalog/catalog.js';
import { implicitSessionId } from '../../ingest/ids.js';
import { spanUuid, type MappedSpan } from '../../ingest/otlp/map-span.js';
import { resourceMetadata } from '../../ingest/otlp/metadata.js';
import { emptyRecord } from '../../ingest/normalize-node.js';
import { nowUs } from '../../record/time.js';
import type { Draft, StoredRow } from '../../record/record.js';
import { storedToWire } from '../../record/row-codec.js';

/** What the trace store lends the OTLP writer (its private storage and session helpers). */
export interface OtlpHost {
  lock<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T>;
  mayExist(projectId: string, runId: string, id: string): boolean;
  lookup(projectId: string, runId: string, ids: readonly string[]): Promise<StoredRow[]>;
  /** Ids of the spans of a trace (only those hanging directly under `parentId`, when given). */
  spanIds(projectId: string, runId: string, traceId: string, parentId?: string): Promise<string[]>;
  /** Deletes a session record no trace or span refers to any more. */
  dropUnusedSession(projectId: string, runId: string, sessionId: string): Promise<void>;
  /** Session records to write for traces (sessionId null: the trace's own implicit session). */
  sessionRows(projectId: string, runId: string, traces: { record: Draft; sessionId: string | null }[]): Promise<Draft[]>;
  /** Session record ids for external ids: an existing session's, else the id derived from the external id. */
  sessionsByExternalId(projectId: string, runId: string, externalIds: readonly string[]): Promise<Map<string, string>>;
  stepAfter(projectId: string, runId: string, traceId: string, exists: boolean): Promise<number>;
  rememberStep(traceId: string, next: number): void;
  write(projectId: string, runId: string, rows: Draft[]): Promise<void>;
}

/** Most entries each of the in-memory maps keeps (the oldest are forgotten first). */
const MAX_REMEMBERED = 100_000;

function remember<K, V>(m: Map<K, V>, k: K, v: V): void {
  m.delete(k);
  m.set(k, v);
  if (m.size > MAX_REMEMBERED) m.delete(m.keys().next().value as K);
}

interface SessionMove {
  trace: Draft;
  from: string;
  externalId: string;
}

interface TraceGroup {
  id: string;
  spans: MappedSpan[];
}

export class OtlpWriter {
  /** run/parent record id -> ids of stored spans waiting under the trace for that parent. */
  readonly #waiting = new Map<string, Set<string>>();
  /** run/trace ids this process has written spans of (its waiting list for them is complete). */
  readonly #known = new Map<string, true>();
  /** project/run/external id -> session record id. */
  readonly #sessions = new Map<string, string>();

  constructor(private readonly host: OtlpHost) {}

  /** Writes the spans of one log stream; returns how many were already stored. */
  async write(project: Project, run: Run, spans: readonly MappedSpan[]): Promise<{ duplicates: number }> {
    const byId = new Map<string, MappedSpan>();
    for (const m of spans) byId.set(m.record.id, m); // the last copy of a span repeated in one batch
    const traces = new Map<string, TraceGroup>();
    for (const m of byId.values()) {
      const t = m.record.trace_id!;
      let g = traces.get(t);
      if (!g) traces.set(t, (g = { id: t, spans: [] }));
      g.spans.push(m);
    }
    return this.host.lock(
      [...traces.keys()].map((t) => `${run.id}/${t}`),
      () => this.#writeLocked(project.id, run.id, byId, traces),
    );
  }

  async #writeLocked(
    projectId: string,
    runId: string,
    byId: Map<string, MappedSpan>,
    traces: Map<string, TraceGroup>,
  ): Promise<{ duplicates: number }> {
    const h = this.host;
    const now = nowUs();
    // 1. Which of the records involved exist already (one lookup), and the stored children that wait for a span of this batch.
    const want = new Set<string>();
    const maybe = (id: string) => {
      if (h.mayExist(projectId, runId, id)) want.add(id);
    };
    const orphanScan: string[] = [];
    for (const g of traces.values()) {
      maybe(g.id);
      if (want.has(g.id) && !this.#known.has(`${runId}/${g.id}`)) orphanScan.push(g.id);
      for (const m of g.spans) {
        maybe(m.record.id);
        const p = m.otel.parentSpanId;
        if (p !== null) maybe(spanUuid(m.otel.traceId, p));
        for (const k of this.#waiting.get(`${runId}/${m.record.id}`) ?? []) want.add(k);
      }
    }
    for (const t of orphanScan) for (const id of await h.spanIds(projectId, runId, t, t)) want.add(id);
    const named = new Set<string>();
    for (const m of byId.values()) if (m.sessionExternalId !== null) named.add(m.sessionExternalId);
    await this.#resolveSessions(projectId, runId, named);
    const stored = new Map<string, StoredRow>();
    for (const r of await h.lookup(projectId, runId, [...want])) stored.set(r.id, r);
    for (const t of orphanScan) this.#adoptStoredOrphans(runId, t, stored);

    // 2. Rewrites of stored records (has_children, parent_id), merged per record.
    const rewrites = new Map<string, Draft>();
    const rewrite = (id: string): Draft | undefined => {
      let d = rewrites.get(id);
      if (!d) {
        const row = stored.get(id);
        if (!row) return undefined;
        d = { ...storedToWire(row), updated_at: now };
        rewrites.set(id, d);
      }
      return d;
    };
    const gainsChildren = (id: string) => {
      const m = byId.get(id);
      if (m && !stored.has(id)) m.record.has_children = true;
      else if (stored.get(id)?.has_children !== true) rewrite(id)!.has_children = true;
    };

    let duplicates = 0;
    const rows: Draft[] = [];
    const newTraces: { record: Draft; externalId: string | null }[] = [];
    const moves: SessionMove[] = [];
    const freshIds = new Set<string>();
    // The in-memory waiting list changes only once the rows are written (a failed write leaves it as it was).
    const waits: [string, string][] = [];
    const settled: string[] = [];
    for (const g of traces.values()) {
      const fresh = g.spans.filter((m) => !stored.has(m.record.id));
      duplicates += g.spans.length - fresh.length;
      // Parents: in this batch, stored, or not yet here (then under the trace, waiting).
      for (const m of fresh) {
        const p = m.otel.parentSpanId;
        m.record.parent_id = g.id;
        if (p === null) continue;
        const pid = spanUuid(m.otel.traceId, p);
        if (byId.has(pid) || stored.get(pid)?.trace_id === g.id) {
          m.record.parent_id = pid;
          gainsChildren(pid);
        } else {
          waits.push([`${runId}/${pid}`, m.record.id]);
        }
      }
      // Stored children that waited for a span of this batch move under it.
      for (const m of g.spans) {
        const k = `${runId}/${m.record.id}`;
        const kids = this.#waiting.get(k);
        if (!kids) continue;
        settled.push(k);
        for (const kid of kids) {
          const fixed = byId.get(kid) && !stored.has(kid) ? byId.get(kid)!.record : rewrite(kid);
          if (!fixed) continue;
          fixed.parent_id = m.record.id;
          gainsChildren(m.record.id);
        }
      }
      const trace = await this.#traceRecord(projectId, runId, g, fresh, stored.get(g.id), now, rows, newTraces, moves);
      // Steps in start order, after those already in the trace.
      fresh.sort((x, y) => x.record.created_at - y.record.created_at || (x.record.id < y.record.id ? -1 : 1));
      let step = await h.stepAfter(projectId, runId, g.id, stored.has(g.id));
      for (const m of fresh) {
        freshIds.add(m.record.id);
        m.record.trace_id = g.id;
        m.record.step_number = step++;
        m.record.session_id = trace.session_id;
        rows.push(m.record);
      }
      h.rememberStep(g.id, step);
    }
    rows.push(...(await this.#sessionsOf(projectId, runId, newTraces)));
    for (const t of newTraces) for (const m of traces.get(t.record.id)!.spans) m.record.session_id = t.record.session_id;
    const moved = moves.length > 0 ? await this.#moveSessions(projectId, runId, moves, rewrites, freshIds, now) : { rows: [], emptied: [] };
    rows.push(...rewrites.values(), ...moved.rows);
    await h.write(projectId, runId, rows);
    for (const k of settled) this.#waiting.delete(k);
    for (const [k, child] of waits) remember(this.#waiting, k, (this.#waiting.get(k) ?? new Set<string>()).add(child));
    for (const t of traces.keys()) remember(this.#known, `${runId}/${t}`, true);
    for (const sid of moved.emptied) await h.dropUnusedSession(projectId, runId, sid);
    return { duplicates };
  }

  /** The trace record to write (new, or the stored one updated), pushed onto `rows`; new ones also onto `newTraces` for their session. */
  async #traceRecord(
    projectId: string,
    runId: string,
    g: TraceGroup,
    fresh: MappedSpan[],
    stored: StoredRow | undefined,
    now: number,
    rows: Draft[],
    newTraces: { record: Draft; externalId: string | null }[],
    moves: SessionMove[],
  ): Promise<Draft> {
    const roots = fresh.filter((m) => m.otel.parentSpanId === null).sort((x, y) => x.record.created_at - y.record.created_at);
    const root = roots[0];
    const earliest = fresh.length > 0 ? Math.min(...fresh.map((m) => m.record.created_at)) : now;
    if (!stored) {
      const t = emptyRecord(g.id, 'trace', root?.record.created_at ?? earliest);
      t.trace_id = g.id;
      t.has_children = true;
      t.user_metadata = { ...resourceMetadata((root ?? fresh[0] ?? g.spans[0]!).otel.resource) };
      if (root) fromRoot(t, root);
      const externalId = root?.sessionExternalId ?? g.spans.find((m) => m.sessionExternalId !== null)?.sessionExternalId ?? null;
      newTraces.push({ record: t, externalId });
      rows.push(t);
      return t;
    }
    const t = { ...storedToWire(stored), updated_at: now };
    let changed = false;
    if (root) {
      fromRoot(t, root);
      changed = true;
    } else if (earliest < t.created_at) {
      t.created_at = earliest;
      changed = true;
    }
    if (!t.has_children) {
      t.has_children = true;
      changed = true;
    }
    // The trace got its own session with its first pieces; a later piece names the conversation: it moves there.
    const externalId = root?.sessionExternalId ?? fresh.find((m) => m.sessionExternalId !== null)?.sessionExternalId ?? null;
    if (externalId !== null && t.session_id === implicitSessionId(projectId, runId, g.id)) {
      moves.push({ trace: t, from: t.session_id, externalId });
      t.session_id = await this.#sessionId(projectId, runId, externalId);
      changed = true;
    }
    if (changed) rows.push(t);
    return t;
  }

  async #sessionId(projectId: string, runId: string, externalId: string): Promise<string> {
    const key = `${projectId}/${runId}/${externalId}`;
    let sid = this.#sessions.get(key);
    if (sid === undefined) await this.#resolveSessions(projectId, runId, [externalId]);
    sid = this.#sessions.get(key)!;
    return sid;
  }

  /** Looks up (in one query) the sessions of the external ids not remembered yet. */
  async #resolveSessions(projectId: string, runId: string, externalIds: Iterable<string>): Promise<void> {
    const unknown = [...new Set(externalIds)].filter((e) => !this.#sessions.has(`${projectId}/${runId}/${e}`));
    if (unknown.length === 0) return;
    for (const [e, sid] of await this.host.sessionsByExternalId(projectId, runId, unknown))
      remember(this.#sessions, `${projectId}/${runId}/${e}`, sid);
  }

  /** Rows that move traces (and their stored spans) to the session they named late; the sessions left empty are returned. */
  async #moveSessions(
    projectId: string,
    runId: string,
    moves: SessionMove[],
    rewrites: Map<string, Draft>,
    fresh: Set<string>,
    now: number,
  ): Promise<{ rows: Draft[]; emptied: string[] }> {
    const rows: Draft[] = [];
    for (const mv of moves) {
      const sid = mv.trace.session_id!;
      const sessions = await this.host.sessionRows(projectId, runId, [{ record: mv.trace, sessionId: sid }]);
      for (const x of sessions) x.external_id = mv.externalId;
      rows.push(...sessions);
      const ids = (await this.host.spanIds(projectId, runId, mv.trace.id)).filter((id) => !fresh.has(id) && !rewrites.has(id));
      for (const row of await this.host.lookup(projectId, runId, ids))
        rows.push({ ...storedToWire(row), session_id: sid, updated_at: now });
      for (const d of rewrites.values()) if (d.trace_id === mv.trace.id) d.session_id = sid;
    }
    return { rows, emptied: moves.map((m) => m.from) };
  }

  /** Session records for new traces: by external id (shared) or each trace's own. */
  async #sessionsOf(projectId: string, runId: string, traces: { record: Draft; externalId: string | null }[]): Promise<Draft[]> {
    const out: Draft[] = [];
    const own = traces.filter((t) => t.externalId === null).map((t) => ({ record: t.record, sessionId: null }));
    if (own.length > 0) out.push(...(await this.host.sessionRows(projectId, runId, own)));
    const named = new Map<string, Draft[]>();
    for (const t of traces) if (t.externalId !== null) named.set(t.externalId, [...(named.get(t.externalId) ?? []), t.record]);
    for (const [externalId, records] of named) {
      const sid = await this.#sessionId(projectId, runId, externalId);
      const sessions = await this.host.sessionRows(
        projectId,
        runId,
        records.map((record) => ({ record, sessionId: sid })),
      );
      for (const s of sessions) s.external_id = externalId;
      out.push(...sessions);
    }
    return out;
  }

  /** After a restart: stored spans hanging under trace `t` that name an OTel parent join the waiting list. */
  #adoptStoredOrphans(runId: string, traceId: string, stored: Map<string, StoredRow>): void {
    for (const row of stored.values()) {
      if (row.trace_id !== traceId || row.parent_id !== traceId || row.type === 'trace') continue;
      const md = storedToWire(row).user_metadata;
      const parentHex = md?.['otel.parent_span_id'];
      const spanHex = md?.['otel.span_id'];
      if (typeof parentHex !== 'string' || typeof spanHex !== 'string') continue;
      const k = `${runId}/${spanUuid(otelTraceHex(traceId), parentHex)}`;
      remember(this.#waiting, k, (this.#waiting.get(k) ?? new Set<string>()).add(row.id));
    }
  }
}

const otelTraceHex = (uuid: string): string => uuid.replace(/-/g, '');

/** The trace record takes the root span's name, input, output, time, duration, status and tags. */
function fromRoot(t: Draft, root: MappedSpan): void {
  const r = root.record;
  t.name = r.name;
  t.input = root.traceInput();
  t.output = root.traceOutput();
  t.created_at = r.created_at;
  t.status_code = r.status_code;
  t.error_message = r.error_message;
  t.tags = r.tags;
  t.user_metadata = { ...(t.user_metadata ?? {}), ...resourceMetadata(root.otel.resource) };
  const d = r.metrics?.['duration_ns'];
  t.metrics = d === undefined ? t.metrics : { ...(t.metrics ?? {}), duration_ns: d };
}

export { implicitSessionId };
