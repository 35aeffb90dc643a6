// DuckDB result chunks -> Arrow, a column at a time from DuckDB's own buffers (the reverse of
// arrow-chunks.ts): fixed-width values and validity bits are copied as whole buffers, a string of at
// most 12 bytes is read from its 16-byte slot, a longer one with one call that copies it out of
// DuckDB's heap. No per-value JS objects, which made the generic path (result-arrow.ts) ~8k rows/s.
// Covers the record columns' types (integers, doubles, booleans, timestamps, text, lists of text, maps
// of text to text or double); a chunk with any other type goes through the generic path.
import { DuckDBTypeId, type DuckDBDataChunk, type DuckDBType } from '../vendor/duckdb.js';
import duckdb from '@duckdb/node-bindings';
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
  type Data,
  type DataType,
} from 'apache-arrow';

const ID = DuckDBTypeId;

type Leaf = 'i64' | 'i32' | 'f64' | 'bool' | 'ts' | 'utf8';
type Shape = { leaf: Leaf } | { list: Leaf } | { map: Leaf };

function leafOf(t: DuckDBType): Leaf | null {
  switch (t.typeId) {
    case ID.BIGINT:
      return 'i64';
    case ID.INTEGER:
      return 'i32';
    case ID.DOUBLE:
      return 'f64';
    case ID.BOOLEAN:
      return 'bool';
    case ID.TIMESTAMP:
      return 'ts';
    case ID.VARCHAR:
      return 'utf8';
    default:
      return null;
  }
}

function shapeOf(t: DuckDBType): Shape | null {
  const leaf = leafOf(t);
  if (leaf) return { leaf };
  if (t.typeId === ID.LIST) {
    const child = leafOf(t.valueType);
    return child === 'utf8' ? { list: child } : null;
  }
  if (t.typeId === ID.MAP) {
    const value = leafOf(t.valueType);
    return t.keyType.typeId === ID.VARCHAR && (value === 'f64' || value === 'utf8') ? { map: value } : null;
  }
  return null;
}

function leafType(leaf: Leaf): DataType {
  return { i64: new Int64(), i32: new Int32(), f64: new Float64(), bool: new Bool(), ts: new TimestampMicrosecond(), utf8: new Utf8() }[
    leaf
  ];
}

function arrowType(shape: Shape): DataType {
  if ('leaf' in shape) return leafType(shape.leaf);
  if ('list' in shape) return new List(new Field('item', leafType(shape.list), true));
  const value: DataType = leafType(shape.map);
  return new Map_(
    new Field('entries', new Struct([new Field('key', new Utf8(), false), new Field('value', value, true)] as Field[]) as never, false),
  );
}

const WIDTH: Record<Leaf, number> = { i64: 8, i32: 4, f64: 8, bool: 1, ts: 8, utf8: 16 };

/** Rows `rows[i]` (or 0..count-1) of a vector; `size` is the vector's length. */
function gatherLeaf(vector: duckdb.Vector, leaf: Leaf, size: number, rows: Uint32Array | null, count: number, type: DataType): Data {
  const data = duckdb.vector_get_data(vector, WIDTH[leaf] * size);
  // No validity mask at all (null) means every value is valid.
  const validity = duckdb.vector_get_validity(vector, Math.ceil(size / 64) * 8) ?? new Uint8Array(0);
  const at = (i: number) => (rows ? rows[i]! : i);
  let nullCount = 0;
  let nullBitmap: Uint8Array | undefined;
  if (validity.length > 0) {
    nullBitmap = new Uint8Array((count + 7) >> 3);
    for (let i = 0; i < count; i++) {
      const r = at(i);
      if ((validity[r >> 3]! >> (r & 7)) & 1) nullBitmap[i >> 3]! |= 1 << (i & 7);
      else nullCount++;
    }
    if (nullCount === 0) nullBitmap = undefined;
  }
  const valid = (i: number) => !nullBitmap || ((nullBitmap[i >> 3]! >> (i & 7)) & 1) === 1;
  if (leaf === 'utf8') {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const parts: Uint8Array[] = new Array(count);
    const offsets = new Int32Array(count + 1);
    let total = 0;
    for (let i = 0; i < count; i++) {
      if (valid(i)) {
        const slot = 16 * at(i);
        const len = view.getUint32(slot, true);
        parts[i] =
          len <= 12
            ? data.subarray(slot + 4, slot + 4 + len)
            : duckdb.get_data_from_pointer(data.buffer as ArrayBuffer, data.byteOffset + slot + 8, len);
        total += len;
      }
      offsets[i + 1] = total;
    }
    const bytes = new Uint8Array(total);
    for (let i = 0; i < count; i++) if (parts[i]) bytes.set(parts[i]!, offsets[i]!);
    return makeData({ type: type as Utf8, length: count, nullCount, nullBitmap, valueOffsets: offsets, data: bytes });
  }
  if (leaf === 'bool') {
    const bits = new Uint8Array((count + 7) >> 3);
    for (let i = 0; i < count; i++) if (data[at(i)]) bits[i >> 3]! |= 1 << (i & 7);
    return makeData({ type: type as Bool, length: count, nullCount, nullBitmap, data: bits });
  }
  const width = WIDTH[leaf];
  let out: Uint8Array;
  if (!rows) out = data.slice(0, width * count);
  else {
    out = new Uint8Array(width * count);
    for (let i = 0; i < count; i++) out.set(data.subarray(width * rows[i]!, width * rows[i]! + width), width * i);
  }
  const typed = leaf === 'i32' ? new Int32Array(out.buffer) : leaf === 'f64' ? new Float64Array(out.buffer) : new BigInt64Array(out.buffer);
  return makeData({ type: type as Int32, length: count, nullCount, nullBitmap, data: typed as Int32Array });
}

/** A list (or map) column: DuckDB's (offset, length) entries become Arrow offsets over gathered children. */
function gatherNested(vector: duckdb.Vector, shape: { list: Leaf } | { map: Leaf }, count: number, type: DataType): Data {
  const entries = duckdb.vector_get_data(vector, 16 * count);
  const view = new DataView(entries.buffer, entries.byteOffset, entries.byteLength);
  const validity = duckdb.vector_get_validity(vector, Math.ceil(count / 64) * 8) ?? new Uint8Array(0);
  const offsets = new Int32Array(count + 1);
  let nullCount = 0;
  let nullBitmap: Uint8Array | undefined;
  if (validity.length > 0) nullBitmap = new Uint8Array((count + 7) >> 3);
  const picks: number[] = [];
  for (let i = 0; i < count; i++) {
    const ok = validity.length === 0 || ((validity[i >> 3]! >> (i & 7)) & 1) === 1;
    if (nullBitmap) {
      if (ok) nullBitmap[i >> 3]! |= 1 << (i & 7);
      else nullCount++;
    }
    if (ok) {
      const off = view.getUint32(16 * i, true);
      const len = view.getUint32(16 * i + 8, true);
      for (let k = 0; k < len; k++) picks.push(off + k);
    }
    offsets[i + 1] = picks.length;
  }
  const child = duckdb.list_vector_get_child(vector);
  const size = duckdb.list_vector_get_size(vector);
  const rows = Uint32Array.from(picks);
  let childData: Data;
  if ('list' in shape) {
    childData = gatherLeaf(child, shape.list, size, rows, rows.length, (type as List).children[0]!.type);
  } else {
    const struct = (type as Map_).children[0]!.type as Struct;
    const keys = gatherLeaf(duckdb.struct_vector_get_child(child, 0), 'utf8', size, rows, rows.length, struct.children[0]!.type);
    const values = gatherLeaf(duckdb.struct_vector_get_child(child, 1), shape.map, size, rows, rows.length, struct.children[1]!.type);
    childData = makeData({ type: struct, length: rows.length, nullCount: 0, children: [keys, values] });
  }
  if (nullCount === 0) nullBitmap = undefined;
  return makeData({ type: type as List, length: count, nullCount, nullBitmap, valueOffsets: offsets, child: childData } as never);
}

/** Converts chunks of one result; null from `create` when a column has a type it does not cover. */
export class ChunkToArrow {
  readonly schema: Schema;
  readonly #shapes: Shape[];

  private constructor(names: readonly string[], shapes: Shape[]) {
    this.#shapes = shapes;
    this.schema = new Schema(names.map((n, i) => new Field(n, arrowType(shapes[i]!), true)));
  }

  static create(names: readonly string[], types: readonly DuckDBType[]): ChunkToArrow | null {
    const shapes = types.map(shapeOf);
    if (shapes.some((s) => s === null)) return null;
    return new ChunkToArrow(names, shapes as Shape[]);
  }

  batch(chunk: DuckDBDataChunk): RecordBatch {
    const raw = chunk.chunk;
    const count = duckdb.data_chunk_get_size(raw);
    const children = this.#shapes.map((shape, i) => {
      const vector = duckdb.data_chunk_get_vector(raw, i);
      const type = this.schema.fields[i]!.type;
      return 'leaf' in shape ? gatherLeaf(vector, shape.leaf, count, null, count, type) : gatherNested(vector, shape, count, type);
    });
    return new RecordBatch(this.schema, makeData({ type: new Struct(this.schema.fields), length: count, nullCount: 0, children }));
  }
}
