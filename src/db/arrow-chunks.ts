// Arrow RecordBatch rows -> a DuckDB data chunk, a column at a time, through the C API. Fixed-width
// columns and validity bits are copied as whole buffers (Arrow and DuckDB share their layouts); a
// string of at most 12 bytes is written inline into DuckDB's 16-byte string slot, a longer one costs
// one call that copies it into the vector's heap. Nothing goes through per-value JS objects.
import duckdb from '@duckdb/node-bindings';
import type { Data, RecordBatch } from 'apache-arrow';

/** How a column is laid out in both Arrow and DuckDB. */
export type AppendKind = 'i64' | 'i32' | 'f64' | 'bool' | 'ts' | 'utf8' | 'tags' | 'map_f64' | 'map_utf8';

const VECTOR_SIZE = duckdb.vector_size();
const T = duckdb.Type;

function logicalType(kind: AppendKind): duckdb.LogicalType {
  const varchar = () => duckdb.create_logical_type(T.VARCHAR);
  switch (kind) {
    case 'i64':
      return duckdb.create_logical_type(T.BIGINT);
    case 'i32':
      return duckdb.create_logical_type(T.INTEGER);
    case 'f64':
      return duckdb.create_logical_type(T.DOUBLE);
    case 'bool':
      return duckdb.create_logical_type(T.BOOLEAN);
    case 'ts':
      return duckdb.create_logical_type(T.TIMESTAMP);
    case 'utf8':
      return varchar();
    case 'tags':
      return duckdb.create_list_type(varchar());
    case 'map_f64':
      return duckdb.create_map_type(varchar(), duckdb.create_logical_type(T.DOUBLE));
    case 'map_utf8':
      return duckdb.create_map_type(varchar(), varchar());
  }
}

/** Scratch space for 16-byte string slots, reused across chunks. */
let slots = new Uint8Array(16 * 4096);
let slots32 = new Uint32Array(slots.buffer);

function slotSpace(n: number): void {
  if (slots.length >= 16 * n) return;
  slots = new Uint8Array(16 * n);
  slots32 = new Uint32Array(slots.buffer);
}

function copyValidity(vector: duckdb.Vector, data: Data, start: number, count: number): void {
  if (data.nullCount === 0 || !data.nullBitmap || data.nullBitmap.length === 0) return;
  const bit0 = data.offset + start;
  duckdb.vector_ensure_validity_writable(vector);
  const bytes = Math.ceil(count / 64) * 8;
  const out = new Uint8Array(bytes);
  const src = data.nullBitmap;
  if ((bit0 & 7) === 0) {
    out.set(src.subarray(bit0 >> 3, Math.min(src.length, (bit0 >> 3) + ((count + 7) >> 3))));
  } else {
    for (let i = 0; i < count; i++) {
      const b = bit0 + i;
      if ((src[b >> 3]! >> (b & 7)) & 1) out[i >> 3]! |= 1 << (i & 7);
    }
  }
  duckdb.copy_data_to_vector_validity(vector, 0, out.buffer, 0, bytes);
}

function sameBytes(bytes: Uint8Array, a: number, b: number, len: number): boolean {
  for (let k = 0; k < len; k++) if (bytes[a + k] !== bytes[b + k]) return false;
  return true;
}

/**
 * Strings [start, start+count) of a Utf8 Data into a VARCHAR vector (nulls by validity). A long string
 * equal to the one before it (a run's id on every row, a trace's id on each of its spans) reuses that
 * row's 16-byte slot, which points at the same bytes in the vector's heap, instead of a call that
 * copies it again.
 */
function writeStrings(vector: duckdb.Vector, data: Data, start: number, count: number): void {
  const offsets = data.valueOffsets as Int32Array;
  const bytes = data.values as Uint8Array;
  const base = data.offset + start;
  const nulls = data.nullCount > 0;
  slotSpace(count);
  slots.fill(0, 0, 16 * count);
  let long: number[] | null = null;
  let dups: number[] | null = null; // pairs: row, row whose slot it copies
  let lastLong = -1;
  for (let i = 0; i < count; i++) {
    const a = offsets[base + i]!;
    const len = offsets[base + i + 1]! - a;
    if (len <= 12) {
      slots32[4 * i] = len;
      for (let j = 0; j < len; j++) slots[16 * i + 4 + j] = bytes[a + j]!;
      continue;
    }
    if (nulls && !data.getValid(base + i)) continue;
    if (lastLong >= 0) {
      const b = offsets[base + lastLong]!;
      if (offsets[base + lastLong + 1]! - b === len && sameBytes(bytes, a, b, len)) {
        (dups ??= []).push(i, lastLong);
        continue;
      }
    }
    (long ??= []).push(i);
    lastLong = i;
  }
  duckdb.copy_data_to_vector(vector, 0, slots.buffer, 0, 16 * count);
  if (long)
    for (const i of long) duckdb.vector_assign_string_element_len(vector, i, bytes.subarray(offsets[base + i]!, offsets[base + i + 1]!));
  if (dups) {
    // vector_get_data copies the slots out; the copies are patched and written back in one go.
    const view = duckdb.vector_get_data(vector, 16 * count);
    for (let k = 0; k < dups.length; k += 2) view.copyWithin(16 * dups[k]!, 16 * dups[k + 1]!, 16 * dups[k + 1]! + 16);
    duckdb.copy_data_to_vector(vector, 0, view.buffer as ArrayBuffer, view.byteOffset, 16 * count);
  }
  copyValidity(vector, data, start, count);
}

function writeFixed(vector: duckdb.Vector, data: Data, start: number, count: number, width: number): void {
  const values = data.values as ArrayBufferView;
  duckdb.copy_data_to_vector(vector, 0, values.buffer as ArrayBuffer, values.byteOffset + (data.offset + start) * width, count * width);
  copyValidity(vector, data, start, count);
}

function writeBool(vector: duckdb.Vector, data: Data, start: number, count: number): void {
  const bits = data.values as Uint8Array;
  const out = new Uint8Array(count);
  const bit0 = data.offset + start;
  for (let i = 0; i < count; i++) {
    const b = bit0 + i;
    out[i] = (bits[b >> 3]! >> (b & 7)) & 1;
  }
  duckdb.copy_data_to_vector(vector, 0, out.buffer, 0, count);
  copyValidity(vector, data, start, count);
}

/**
 * List or map rows [start, start+count): list entries (offset, length as uint64) plus the flat children,
 * written in one pass (the child vector is reserved for all of them; they may outnumber the rows).
 */
function writeNested(vector: duckdb.Vector, data: Data, start: number, count: number, kind: 'tags' | 'map_f64' | 'map_utf8'): void {
  const offsets = data.valueOffsets as Int32Array;
  const base = data.offset + start;
  const first = offsets[base]!;
  const total = offsets[base + count]! - first;
  slotSpace(count);
  for (let i = 0; i < count; i++) {
    const a = offsets[base + i]!;
    slots32[4 * i] = a - first;
    slots32[4 * i + 1] = 0;
    slots32[4 * i + 2] = offsets[base + i + 1]! - a;
    slots32[4 * i + 3] = 0;
  }
  duckdb.copy_data_to_vector(vector, 0, slots.buffer, 0, 16 * count);
  copyValidity(vector, data, start, count);
  duckdb.list_vector_reserve(vector, Math.max(total, 1));
  duckdb.list_vector_set_size(vector, total);
  const child = duckdb.list_vector_get_child(vector);
  const childData = data.children[0]!;
  if (total === 0) return;
  if (kind === 'tags') {
    writeStrings(child, childData, first, total);
    return;
  }
  const keys = duckdb.struct_vector_get_child(child, 0);
  const values = duckdb.struct_vector_get_child(child, 1);
  writeStrings(keys, childData.children[0]!, first, total);
  if (kind === 'map_f64') writeFixed(values, childData.children[1]!, first, total, 8);
  else writeStrings(values, childData.children[1]!, first, total);
}

/** Column kinds of a table, in order; DuckDB logical types for them. */
export function logicalTypes(kinds: readonly AppendKind[]): duckdb.LogicalType[] {
  return kinds.map(logicalType);
}

/** Writes rows [start, start+count) of `batch` (count at most one vector) into `chunk`, column by column. */
export function writeChunk(chunk: duckdb.DataChunk, kinds: readonly AppendKind[], batch: RecordBatch, start: number, count: number): void {
  const columns = batch.data.children;
  if (columns.length !== kinds.length) throw new Error(`batch has ${columns.length} columns, table has ${kinds.length}`);
  for (let c = 0; c < kinds.length; c++) {
    const vector = duckdb.data_chunk_get_vector(chunk, c);
    const data = columns[c]!;
    const kind = kinds[c]!;
    switch (kind) {
      case 'utf8':
        writeStrings(vector, data, start, count);
        break;
      case 'i64':
      case 'ts':
      case 'f64':
        writeFixed(vector, data, start, count, 8);
        break;
      case 'i32':
        writeFixed(vector, data, start, count, 4);
        break;
      case 'bool':
        writeBool(vector, data, start, count);
        break;
      default:
        writeNested(vector, data, start, count, kind);
    }
  }
  duckdb.data_chunk_set_size(chunk, count);
}

export { VECTOR_SIZE };
