// Rows -> one columnar Arrow RecordBatch: the hot path of ingest (see bench/micro.ts). The column
// builders' buffers are reused by the next batch, so a batch must be consumed (written to the log,
// inserted into DuckDB) before its builder builds again: the record store keeps a pool of builders.
import {
  Bool,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  Map_,
  RecordBatch,
  Schema,
  Struct,
  TimestampMicrosecond,
  Utf8,
  type DataType,
} from 'apache-arrow';
import { type BoolBuilder, builderFor, NestedBuilder, type NumberBuilder, Utf8Builder } from './column-builders.js';
import { kindOf, RECORD_COLUMNS, type ColumnKind, type RecordKind } from '../../record/record-columns.js';
import { JsonText, type FieldColumn, type LogRow } from '../../record/record.js';

function arrowType(kind: ColumnKind): DataType {
  switch (kind) {
    case 'i64':
      return new Int64();
    case 'i32':
      return new Int32();
    case 'f64':
      return new Float64();
    case 'bool':
      return new Bool();
    case 'ts':
      return new TimestampMicrosecond();
    case 'utf8':
      return new Utf8();
    case 'tags':
      return new List(new Field('item', new Utf8(), true));
    case 'map_f64':
      return mapType(new Float64());
    case 'map_utf8':
      return mapType(new Utf8());
    default: {
      const never: never = kind;
      throw new Error(`unknown column kind ${String(never)}`);
    }
  }
}

function mapType(value: DataType): Map_ {
  return new Map_(new Field('entries', new Struct([new Field('key', new Utf8(), false), new Field('value', value, true)]), false));
}

export const RECORD_SCHEMA = new Schema(RECORD_COLUMNS.map((col) => new Field(col.name, arrowType(col.kind), col.name !== 'seq')));

/** JSON text of a structured value; lone surrogates (escaped by JSON.stringify) become U+FFFD. */
export function jsonText(v: unknown): string {
  if (v instanceof JsonText) return v.text;
  const s = JSON.stringify(v);
  return s.indexOf('\\ud') === -1 ? s : withoutLoneSurrogates(s);
}

/**
 * JSON.stringify writes a lone UTF-16 surrogate as a \\udXXX escape (it never escapes a valid pair);
 * such escapes become \\ufffd, as a UTF-8 encoder would do with the raw character. Escaped
 * backslashes are skipped.
 */
export function withoutLoneSurrogates(text: string): string {
  return text.replace(/(\\\\)|\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g, (m, escapedBackslash: string | undefined) =>
    escapedBackslash ? m : '\\ufffd',
  );
}

/** The columns after the first 20, which `build` pushes in a loop by name: fields, never a derived flag. */
const REST_COLUMNS = RECORD_COLUMNS.slice(20).filter((col): col is FieldColumn => col.holds !== 'flag');
if (REST_COLUMNS.length !== RECORD_COLUMNS.length - 20)
  throw new Error('a derived flag column among the columns BatchBuilder pushes by name');

/** Builds RecordBatches of RECORD_SCHEMA from rows; one builder per writer, reused batch after batch. */
export class BatchBuilder {
  readonly #builders = RECORD_COLUMNS.map(builderFor);
  /** Metric names of the last batch built, by record kind (for the segment's metric columns). */
  metricsByKind = new Map<RecordKind, Set<string>>();

  build(rows: readonly LogRow[], metadata?: Map<string, string>): RecordBatch {
    const byKind = (this.metricsByKind = new Map());
    const n = rows.length;
    const b = this.#builders;
    for (const x of b) x.reset(n);
    const [
      seq,
      id,
      type,
      project,
      run,
      session,
      trace,
      parent,
      step,
      name,
      input,
      inputJson,
      output,
      outputJson,
      created,
      updated,
      tags,
      metrics,
      userMeta,
      datasetMeta,
    ] = b as [
      NumberBuilder,
      Utf8Builder,
      Utf8Builder,
      Utf8Builder,
      Utf8Builder,
      Utf8Builder,
      Utf8Builder,
      Utf8Builder,
      NumberBuilder,
      Utf8Builder,
      Utf8Builder,
      BoolBuilder,
      Utf8Builder,
      BoolBuilder,
      NumberBuilder,
      NumberBuilder,
      NestedBuilder,
      NestedBuilder,
      NestedBuilder,
      NestedBuilder,
    ];
    const rest = b.slice(20);
    const restCols = REST_COLUMNS;
    for (let r = 0; r < n; r++) {
      const row = rows[r]!;
      seq.push(row.seq);
      id.push(row.id);
      type.push(row.type);
      project.push(row.project_id);
      run.push(row.run_id);
      session.push(row.session_id);
      trace.push(row.trace_id);
      parent.push(row.parent_id);
      step.push(row.step_number);
      name.push(row.name);
      const inp = row.input;
      input.push(inp === null || inp === undefined ? null : typeof inp === 'string' ? inp : jsonText(inp));
      inputJson.push(inp !== null && inp !== undefined && typeof inp !== 'string');
      const out = row.output;
      output.push(out === null || out === undefined ? null : typeof out === 'string' ? out : jsonText(out));
      outputJson.push(out !== null && out !== undefined && typeof out !== 'string');
      created.push(row.created_at);
      updated.push(row.updated_at);
      tags.push(row.tags);
      const m = row.metrics;
      metrics.push(m);
      if (m) {
        const kind = kindOf(row.type);
        let names = byKind.get(kind);
        if (!names) byKind.set(kind, (names = new Set()));
        for (const k in m) if (typeof m[k] === 'number') names.add(k);
      }
      userMeta.push(row.user_metadata);
      datasetMeta.push(row.dataset_metadata);
      for (let k = 0; k < rest.length; k++) {
        const col = restCols[k]!;
        const v = row[col.name];
        const builder = rest[k]!;
        if (col.holds === 'json') (builder as Utf8Builder).push(v === null || v === undefined ? null : jsonText(v));
        else if (builder instanceof Utf8Builder) builder.push(typeof v === 'string' ? v : v === null || v === undefined ? null : String(v));
        else builder.push(v);
      }
    }
    const children = b.map((x, i) => (x instanceof NestedBuilder ? x.finish(RECORD_SCHEMA.fields[i]!.type) : x.finish()));
    const data = makeData({ type: new Struct(RECORD_SCHEMA.fields), length: n, nullCount: 0, children });
    return new RecordBatch(RECORD_SCHEMA, data, metadata);
  }
}
