// A DuckDB result (read whole or one chunk at a time) as apache-arrow columns. Scalars keep their type
// (integers, doubles, booleans, text, microsecond timestamps); lists of text and maps of text to
// text or double keep theirs (the record columns `tags`, `metrics`, `*_metadata`); any other type
// arrives as DuckDB's text form of the value, so a result always converts.
import { DuckDBTypeId, type DuckDBResultReader, type DuckDBType, type DuckDBValue } from '../vendor/duckdb.js';
import {
  Bool,
  Field,
  Float64,
  Int32,
  Int64,
  List,
  makeData,
  makeVector,
  Map_,
  RecordBatch,
  Schema,
  Struct,
  Table,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';

const ID = DuckDBTypeId;

interface Converter {
  readonly type: DataType;
  vector(values: readonly DuckDBValue[]): Vector;
}

function mapType(value: DataType): Map_ {
  return new Map_(new Field('entries', new Struct([new Field('key', new Utf8(), false), new Field('value', value, true)]), false));
}

const asNumber = (v: DuckDBValue): number | null =>
  v === null
    ? null
    : typeof v === 'number'
      ? v
      : typeof v === 'bigint'
        ? Number(v)
        : Number((v as { toDouble?: () => number }).toDouble?.() ?? String(v));

function converter(t: DuckDBType): Converter {
  const simple = (type: DataType, map: (v: DuckDBValue) => unknown): Converter => ({
    type,
    vector: (values) => vectorFromArray(values.map(map) as never[], type),
  });
  switch (t.typeId) {
    case ID.BOOLEAN:
      return simple(new Bool(), (v) => v);
    case ID.TINYINT:
    case ID.SMALLINT:
    case ID.INTEGER:
    case ID.UTINYINT:
    case ID.USMALLINT:
      return simple(new Int32(), (v) => v);
    case ID.BIGINT:
      return simple(new Int64(), (v) => v);
    case ID.UINTEGER:
    case ID.UBIGINT:
    case ID.HUGEINT:
    case ID.UHUGEINT:
    case ID.FLOAT:
    case ID.DOUBLE:
    case ID.DECIMAL:
      return simple(new Float64(), asNumber);
    case ID.VARCHAR:
      return simple(new Utf8(), (v) => v);
    case ID.TIMESTAMP:
    case ID.TIMESTAMP_TZ: {
      const type = new TimestampMicrosecond();
      return {
        type,
        vector: (values) => {
          // Built as Int64 (null bits included), then retyped: Arrow stores both as 64-bit integers.
          const ints = vectorFromArray(
            values.map((v) => (v === null ? null : (v as { micros: bigint }).micros)),
            new Int64(),
          ).data[0]!;
          return makeVector(
            makeData({
              type,
              length: ints.length,
              nullCount: ints.nullCount,
              data: ints.values as BigInt64Array,
              nullBitmap: ints.nullBitmap,
            }),
          );
        },
      };
    }
    case ID.LIST:
      if ('valueType' in t && (t.valueType as DuckDBType).typeId === ID.VARCHAR) {
        const type = new List(new Field('item', new Utf8(), true));
        return {
          type,
          vector: (values) => vectorFromArray(values.map((v) => (v === null ? null : (v as { items: unknown[] }).items)) as never[], type),
        };
      }
      break;
    case ID.MAP: {
      const m = t as DuckDBType & { keyType: DuckDBType; valueType: DuckDBType };
      const value = m.valueType.typeId === ID.DOUBLE ? new Float64() : m.valueType.typeId === ID.VARCHAR ? new Utf8() : null;
      if (m.keyType.typeId === ID.VARCHAR && value) {
        const type = mapType(value);
        const entries = (v: DuckDBValue) =>
          v === null ? null : new Map((v as { entries: { key: unknown; value: unknown }[] }).entries.map((e) => [e.key, e.value]));
        return { type, vector: (values) => vectorFromArray(values.map(entries) as never[], type) };
      }
      break;
    }
    default:
      break;
  }
  const type = new Utf8();
  return {
    type,
    vector: (values) =>
      vectorFromArray(
        values.map((v) => (v === null ? null : String(v))),
        type,
      ),
  };
}

/** Converts result chunks to Arrow with one schema for the whole result. */
export class ArrowConverter {
  readonly schema: Schema;
  readonly #convert: Converter[];

  constructor(names: readonly string[], types: readonly DuckDBType[]) {
    this.#convert = types.map(converter);
    this.schema = new Schema(names.map((n, i) => new Field(n, this.#convert[i]!.type, true)));
  }

  /** Rows (a result chunk, or all a reader holds) as one RecordBatch. */
  batch(rows: { readonly rowCount: number; getColumns(): DuckDBValue[][] }): RecordBatch {
    const columns = rows.getColumns();
    const vectors = this.#convert.map((c, i) => c.vector(columns[i] ?? []));
    // Built from the children directly: a result may repeat a column name, which a Table of named vectors cannot.
    const children = vectors.map((v) => v.data[0]!);
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: rows.rowCount, nullCount: 0, children }));
  }
}

/** A whole read result as an Arrow Table. */
export function readerToTable(reader: DuckDBResultReader): Table {
  const conv = new ArrowConverter(reader.columnNames(), reader.columnTypes());
  if (reader.currentRowCount === 0) return new Table(conv.schema);
  return new Table([conv.batch({ rowCount: reader.currentRowCount, getColumns: () => reader.getColumns() })]);
}
