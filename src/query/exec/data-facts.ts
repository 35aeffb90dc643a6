// Support for the planner: facts about the stored spans of a scope it may rely on
// (src/query/match-facts.ts): which span types carry each kind-specific column, and which have
// children. Measured from the rows, never assumed: OpenTelemetry gives llm spans children, imports may
// carry a model on any span. Rows still in memory come from the notes their tables keep as rows arrive
// (mem-tables.ts), or, for rows replayed from the log, from a scan of the columns the question tests.
// Returns: the facts of a snapshot's scope, a superset of the truth (dead rows count too: a superset
// only ever skips less).
// Assumes: segments never change, so each one's facts are taken from its manifest entry (measured when
// it was written), or for a segment written without them read once (a GROUP BY over a few narrow
// columns) and kept by file name.
import type { SqlRunner } from '../../db/database.js';
import { ident, joinSql, raw, sql, type Sql } from '../sql.js';
import type { ColumnDef } from '../columns.js';
import { KIND_COLUMNS, type DataFacts } from '../match-facts.js';
import type { TypeFacts as TypeFactsEntry } from '../../storage/manifest/manifest.js';
import type { Scope } from '../../storage/record-store.js';
import type { TypeNotes } from '../../storage/memtable/mem-tables.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';

/** type -> [has children somewhere, kind columns (ids) set somewhere]. */
type TypeFacts = Map<string, { children: boolean; columns: Set<string> }>;

const select = (columns: readonly ColumnDef[]) =>
  sql`SELECT r.type AS type, bool_or(r.has_children) AS hc${joinSql(
    columns.map((c, i) => sql`, bool_or(${raw(c.sql)} IS NOT NULL) AS ${ident(`k${i}`)}`),
    '',
  )}`;

/** The stored column a kind column reads (`r.model` -> model), or null for a computed one. */
export const storedName = (c: ColumnDef): string | null => /^r\.([a-z_][a-z0-9_]*)$/.exec(c.sql)?.[1] ?? null;

/** The columns a store's memory tables should note: the kind columns that are plain stored ones. */
export const NOTED_COLUMNS: readonly string[] = KIND_COLUMNS.map(storedName).filter((n): n is string => n !== null);

function fromNotes(notes: TypeNotes, wanted: readonly ColumnDef[], names: readonly string[]): TypeFacts {
  const out: TypeFacts = new Map();
  for (const [type, f] of notes)
    out.set(type, { children: f.children, columns: new Set(wanted.filter((_, i) => f.columns.has(names[i]!)).map((c) => c.id)) });
  return out;
}

/** A segment's facts as its manifest entry records them, or null when they do not cover every kind column. */
export function fromEntry(facts: TypeFactsEntry | undefined): TypeFacts | null {
  if (facts === undefined) return null;
  const checked = new Set(facts.checked);
  const names = KIND_COLUMNS.map(storedName);
  if (!names.every((n) => n !== null && checked.has(n))) return null;
  const out: TypeFacts = new Map();
  for (const [type, f] of Object.entries(facts.types)) {
    const set = new Set(f.set);
    out.set(type, { children: f.children, columns: new Set(KIND_COLUMNS.filter((_, i) => set.has(names[i]!)).map((c) => c.id)) });
  }
  return out;
}

export class DataFactsCache {
  readonly #db: SqlRunner;
  readonly #byFile = new Map<string, Promise<TypeFacts>>();

  readonly #noted: ReadonlySet<string>;

  /** `noted`: the columns memory tables note per span type (RecordStoreOptions.notedColumns). */
  constructor(db: SqlRunner, noted: readonly string[] = []) {
    this.#db = db;
    this.#noted = new Set(noted);
  }

  async #read(from: Sql, kindColumns: readonly ColumnDef[]): Promise<TypeFacts> {
    const out: TypeFacts = new Map();
    for (const row of await this.#db.all(sql`${select(kindColumns)} FROM ${from} r GROUP BY r.type`)) {
      const columns = new Set(kindColumns.filter((_, i) => row[`k${i}`] === true).map((c) => c.id));
      out.set(String(row['type']), { children: row['hc'] === true, columns });
    }
    return out;
  }

  #file(path: string): Promise<TypeFacts> {
    let p = this.#byFile.get(path);
    if (!p) {
      p = this.#read(sql`read_parquet(${path})`, KIND_COLUMNS);
      // A failed read is not remembered (the next query tries again).
      p.catch(() => this.#byFile.delete(path));
      this.#byFile.set(path, p);
    }
    return p;
  }

  /** Facts about the spans of a scope in this snapshot: children, and the kind columns named (by id). */
  async facts(snap: Snapshot, scope: Scope, columns: ReadonlySet<string>): Promise<DataFacts> {
    const wanted = KIND_COLUMNS.filter((c) => columns.has(c.id));
    this.#prune(snap);
    const parts = await Promise.all(snap.segmentsFor(scope).map((s) => fromEntry(s.type_facts) ?? this.#file(snap.path(s))));
    // Rows in memory: what their tables noted at ingest, when it covers the columns asked for.
    const names = wanted.map(storedName);
    const { notes, unnoted } = snap.memoryNotes(scope);
    const covered = names.every((n) => n !== null && this.#noted.has(n));
    if (covered) for (const n of notes) parts.push(fromNotes(n, wanted, names as string[]));
    const mem = snap.memoryRows(scope, covered ? unnoted : undefined);
    if (mem) parts.push(await this.#read(mem, wanted));
    // Columns not asked for are left out: unknown, so the analysis assumes any kind carries them.
    const typesWith = new Map<string, Set<string>>(wanted.map((c) => [c.id, new Set<string>()]));
    const typesWithChildren = new Set<string>();
    for (const part of parts) {
      for (const [type, f] of part) {
        if (f.children) typesWithChildren.add(type);
        for (const c of f.columns) typesWith.get(c)?.add(type);
      }
    }
    return { typesWith, typesWithChildren };
  }

  /** Forgets files merged or deleted since (of every project), once the cache has grown past what is live. */
  #prune(snap: Snapshot): void {
    const live = snap.segmentsOfKind('span');
    if (this.#byFile.size <= 2 * live.length + 64) return;
    const keep = new Set(live.map((s) => snap.path(s)));
    for (const f of this.#byFile.keys()) if (!keep.has(f)) this.#byFile.delete(f);
  }
}
