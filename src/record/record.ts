// The record as TypeScript types, derived from RECORD_COLUMNS so that a column added there reaches
// every form. One record, four forms:
//  - Draft: what ingest, import and rewrites build: the fields, with an id, a type and a creation time;
//  - LogRow: a draft placed in its project and run, with its seq: what the log and a batch take;
//  - StoredRow: a row as DuckDB returns it for STORED_SELECT (NULL as null, BIGINTs as bigint);
//  - the API record, made from stored rows by row-codec.ts.
import type { RecordColumn } from './record-columns.js';

/**
 * JSON text to store as it is (an imported row's input, output, tools or extra): kept as that text,
 * with `<name>_json` true for input and output, without a parse and a new stringify.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** The JS value a record holds in a column of each kind. */
interface KindValues {
  i64: number;
  i32: number;
  f64: number;
  bool: boolean;
  /** Epoch microseconds (exact in a JS number). */
  ts: number;
  utf8: string;
  tags: string[];
  map_f64: Record<string, number>;
  map_utf8: Record<string, string>;
}

/** Columns whose value a record holds: all but the `<name>_json` flags, which a batch derives. */
export type FieldColumn = Exclude<RecordColumn, { holds: 'flag' }>;
export type FieldName = FieldColumn['name'];

/** A JSON column (`json`, `io`) holds any value, or JsonText already serialised; the others their kind's value. */
type FieldValue<C extends FieldColumn> = C['holds'] extends 'value' ? KindValues[C['kind']] : unknown;

/** Every field of a record, each of which may be absent (stored as NULL). */
export type RecordFields = { [C in FieldColumn as C['name']]?: FieldValue<C> };

/** What a record has from the moment it is built. */
type Identity = 'id' | 'type' | 'created_at';
/** Where writing places a record: its project and run (Ingest.write), its place in the log (RecordStore.append). */
type Placement = 'seq' | 'project_id' | 'run_id';

/** A record as ingest, import and rewrites build it, before it is placed in a run and the log. */
export type Draft = RecordFields & Required<Pick<RecordFields, Identity>>;

/** A record as the log and the batch builder take it. */
export type LogRow = Draft & Required<Pick<RecordFields, Placement>>;

/**
 * Places drafts in a project and run, in place (no copy on the ingest path): they become log rows.
 * Their seq is a placeholder until RecordStore.append assigns it, in the order rows reach the log.
 */
export function placeDrafts(drafts: Draft[], projectId: string, runId: string): asserts drafts is LogRow[] {
  for (const d of drafts) {
    d.seq = 0;
    d.project_id = projectId;
    d.run_id = runId;
  }
}

/** A record's links that logging needs without asking DuckDB (kept for each record in a memory table). */
export type RecordLinks = Readonly<
  Pick<LogRow, 'seq' | 'project_id' | 'type'> & { [K in 'trace_id' | 'session_id']: string | null } & { has_children: boolean }
>;

/** Entries of a MAP column as DuckDB returns them. */
export type MapEntries<V> = readonly { readonly key: string; readonly value: V | null }[];

/** The JS value DuckDB returns for a column of each kind (STORED_SELECT turns timestamps into epoch µs). */
interface StoredKindValues {
  i64: bigint;
  i32: number;
  f64: number;
  bool: boolean;
  ts: bigint;
  utf8: string;
  /** Tag lists are written without nulls, but an imported file may hold them. */
  tags: (string | null)[];
  map_f64: MapEntries<number>;
  map_utf8: MapEntries<string>;
}

/** Columns every stored row has a value in (every way in writes them). */
export type StoredRequired = Identity | Placement;

/** A row of the record tables as DuckDB returns it for STORED_SELECT: every column, NULL as null. */
export type StoredRow = {
  readonly [C in RecordColumn as C['name']]: StoredKindValues[C['kind']] | (C['name'] extends StoredRequired ? never : null);
};

/** Columns of stored rows as a query selected them: any subset (and extra columns), values unchecked. */
export type SelectedRow = Readonly<Record<string, unknown>>;

/** A record as the API returns it (an Extended*Record): its fields by name, as JSON values. */
export type ApiRecord = Record<string, unknown>;

/**
 * Drafts whose id was minted from a fresh random seed (no client id, no idempotency key, no ancestor
 * with a client id): no stored record can have that id, so appending them skips the sealed-id lookup.
 * Held outside the record so it never reaches a column; taken once (a second append of the same
 * object looks its id up).
 */
const mintedFresh = new WeakSet<object>();

export function markMintedFresh(d: Draft): void {
  mintedFresh.add(d);
}

/** Whether `d` was marked by markMintedFresh and not taken since; takes the mark. */
export function takeMintedFresh(d: Draft): boolean {
  return mintedFresh.delete(d);
}
