// Session records of logging: the implicit session each trace without one gets, named sessions
// created on first use, sessions found by external id, and the stand-in sessions dropped when no
// record uses them any more. Also the scoped one-parameter scans logging asks of live records.
import type { Database } from '../../db/database.js';
import type { Draft } from '../../record/record.js';
import { implicitSessionId, uuidFromHash } from '../../ingest/ids.js';
import { emptyRecord } from '../../ingest/normalize-node.js';
import type { RecordStore, Scope } from '../../storage/record-store.js';
import { sql, type Sql } from '../../query/sql.js';

export class Sessions {
  readonly #records: RecordStore;
  readonly #db: Database;

  constructor(records: RecordStore, db: Database) {
    this.#records = records;
    this.#db = db;
  }

  /**
   * Session records for traces: a trace without a session gets its own implicit one (id derived from
   * the trace id, so retries match); a named session that does not exist yet is created. Sets each
   * trace record's session_id.
   */
  async forTraces(
    projectId: string,
    runId: string,
    traces: { record: Draft; sessionId: string | null }[],
    externalId: string | null,
  ): Promise<Draft[]> {
    const byExternal = externalId === null ? null : await this.#byExternalId(projectId, runId, externalId);
    const explicit = [...new Set(traces.map((t) => t.sessionId).filter((s): s is string => s !== null))];
    const existing = new Set<string>();
    const unsure: string[] = [];
    for (const id of explicit) {
      const recent = this.#records.recent(runId, id);
      if (recent?.type === 'session') existing.add(id);
      else if (!recent && this.#records.mayExist(projectId, runId, id)) unsure.push(id);
    }
    for (const r of await this.#records.lookup(projectId, runId, unsure)) if (r.type === 'session') existing.add(r.id);
    const out = new Map<string, Draft>();
    for (const t of traces) {
      const explicitId = t.sessionId ?? byExternal;
      const sid = explicitId ?? implicitSessionId(projectId, runId, t.record.id);
      t.record['session_id'] = sid;
      if (existing.has(sid) || out.has(sid)) continue;
      const session = emptyRecord(sid, 'session', t.record.created_at);
      session.input = t.record.input ?? '';
      session.output = t.record.output ?? null;
      session.has_children = true;
      if (externalId !== null && explicitId === byExternal) session.external_id = externalId;
      out.set(sid, session);
    }
    return [...out.values()];
  }

  async #byExternalId(projectId: string, runId: string, externalId: string): Promise<string> {
    const rows = await this.scan(
      { projectId, runId, kinds: ['session'] },
      (src) => sql`SELECT id FROM ${src} WHERE external_id = ${externalId} ORDER BY created_at LIMIT 1`,
    );
    return rows.length > 0 ? String(rows[0]!['id']) : uuidFromHash('session-external', projectId, runId, externalId);
  }

  /**
   * Session ids for external ids (OpenTelemetry): derived from the external id, unless the run has
   * user-created sessions (only POST .../sessions gives one an id not derived from it); the oldest wins.
   */
  async byExternalIds(
    projectId: string,
    runId: string,
    externalIds: readonly string[],
    userCreated: boolean,
  ): Promise<Map<string, string>> {
    const derived = (e: string) => uuidFromHash('session-external', projectId, runId, e);
    if (!userCreated) return new Map(externalIds.map((e) => [e, derived(e)]));
    const rows = await this.#records.read((snap) => {
      const src = snap.source({ projectId, runId, kinds: ['session'] });
      return this.#db.all(
        sql`SELECT external_id, id FROM ${src.sql} WHERE external_id IN (SELECT unnest(${[...externalIds]}::VARCHAR[])) ORDER BY created_at DESC`,
      );
    });
    const found = new Map(rows.map((row) => [String(row['external_id']), String(row['id'])]));
    return new Map(externalIds.map((e) => [e, found.get(e) ?? derived(e)]));
  }

  /** Deletes a session record that no trace or span refers to any more (a stand-in's implicit session). */
  async dropUnused(projectId: string, runId: string, sessionId: string): Promise<void> {
    const used = await this.scan(
      { projectId, runId, kinds: ['trace', 'span'] },
      (src) => sql`SELECT 1 FROM ${src} WHERE session_id = ${sessionId} LIMIT 1`,
    );
    if (used.length > 0) return;
    const [row] = await this.#records.lookup(projectId, runId, [sessionId]);
    if (row && row.type === 'session') await this.#records.deleteSeqs([Number(row.seq)]);
  }

  /** Rows of a query over a scope's live records (`src`). */
  scan(scope: Scope, query: (src: Sql) => Sql): Promise<Record<string, unknown>[]> {
    return this.#records.read((snap) => this.#db.all(query(snap.source(scope).sql)));
  }
}
