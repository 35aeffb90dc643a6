// Column builders for Arrow batches: values go straight into typed arrays and UTF-8 buffers that the
// builder owns and reuses, and makeData wraps them without copying (apache-arrow's own per-value
// builders cost several times more). One builder per column; see batch-builder.ts for the rows.
import {
  Bool,
  Float64,
  Int32,
  Int64,
  type List,
  makeData,
  type Map_,
  type Struct,
  TimestampMicrosecond,
  Utf8,
  type Data,
  type DataType,
} from 'apache-arrow';
import type { PhysicalColumn } from '../../record/record-columns.js';

/**
 * NEGATIVE_ZERO: numbers are stored with -0 as 0. They compare equal, but DuckDB's Parquet writer keeps
 * one of them in a column's dictionary and its bloom filter holds that one's bits: `= 0` then skips a
 * row group whose zeros came as -0 first (a count of `metric eq 0` gave 0 for 7 such rows). Filters
 * compile `eq 0` as a range for segments written before (query/compile-filter.ts numberLeaf).
 */
function grow<T extends Uint8Array | Int32Array | Float64Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  let n = a.length * 2;
  while (n < need) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/** Validity bits (Arrow and DuckDB share the layout: bit i of byte i/8, LSB first, 1 = valid). */
export class Validity {
  bits = new Uint8Array(256);
  nulls = 0;
  reset(n: number): void {
    this.bits = grow(this.bits, (n >> 3) + 8);
    this.bits.fill(0, 0, (n >> 3) + 1);
    this.nulls = 0;
  }
  set(i: number): void {
    this.bits[i >> 3]! |= 1 << (i & 7);
  }
  bitmap(n: number): Uint8Array | undefined {
    return this.nulls === 0 ? undefined : this.bits.subarray(0, (n + 7) >> 3);
  }
}

export class Utf8Builder {
  offsets = new Int32Array(1025);
  data = Buffer.allocUnsafe(1 << 16);
  readonly valid = new Validity();
  length = 0;
  #pos = 0;
  /** The last value pushed (null after a null): a repeat copies bytes instead of encoding them. */
  #last: string | null = null;

  reset(expected: number): void {
    this.offsets = grow(this.offsets, expected + 1);
    this.valid.reset(expected);
    this.length = 0;
    this.#pos = 0;
    this.#last = null;
  }

  push(s: string | null | undefined): void {
    const i = this.length++;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, i + 2);
    if ((i >> 3) + 1 >= this.valid.bits.length) {
      const old = this.valid.bits.length;
      this.valid.bits = grow(this.valid.bits, (i >> 3) + 2);
      this.valid.bits.fill(0, old);
    }
    if (s === null || s === undefined) {
      this.valid.nulls++;
      this.offsets[i + 1] = this.#pos;
      this.#last = null;
      return;
    }
    this.valid.set(i);
    if (s.length > 0) {
      const need = this.#pos + s.length * 3;
      if (need > this.data.length) {
        let n = this.data.length * 2;
        while (n < need) n *= 2;
        const b = Buffer.allocUnsafe(n);
        this.data.copy(b, 0, 0, this.#pos);
        this.data = b;
      }
      if (s === this.#last) {
        // The same value as the row before (ids of the run, the trace, the parent): copy its bytes.
        const from = this.offsets[i - 1]!;
        const len = this.offsets[i]! - from;
        this.data.copyWithin(this.#pos, from, from + len);
        this.#pos += len;
      } else {
        // Lone UTF-16 surrogates become U+FFFD, as any UTF-8 encoder does: DuckDB needs valid UTF-8.
        this.#pos += this.data.write(s, this.#pos);
      }
    }
    this.#last = s;
    this.offsets[i + 1] = this.#pos;
  }

  finish(): Data<Utf8> {
    const n = this.length;
    return makeData({
      type: new Utf8(),
      length: n,
      nullCount: this.valid.nulls,
      nullBitmap: this.valid.bitmap(n),
      valueOffsets: this.offsets.subarray(0, n + 1),
      data: this.data.subarray(0, this.#pos),
    });
  }
}

/** Fixed-width numbers, with validity. `i64` and `ts` hold safe integers written as two int32 halves. */
export class NumberBuilder {
  values: Float64Array | Int32Array;
  readonly valid = new Validity();
  length = 0;
  constructor(readonly kind: 'i32' | 'f64' | 'i64' | 'ts') {
    this.values = kind === 'i32' ? new Int32Array(1024) : kind === 'f64' ? new Float64Array(1024) : new Int32Array(2048);
  }
  reset(expected: number): void {
    this.values = grow(this.values, this.kind === 'i64' || this.kind === 'ts' ? expected * 2 : expected);
    this.valid.reset(expected);
    this.length = 0;
  }
  push(v: unknown): void {
    const i = this.length++;
    const wide = this.kind === 'i64' || this.kind === 'ts';
    if ((wide ? 2 * i + 2 : i + 1) > this.values.length) this.values = grow(this.values, wide ? 2 * i + 2 : i + 1);
    if ((i >> 3) + 1 >= this.valid.bits.length) {
      const old = this.valid.bits.length;
      this.valid.bits = grow(this.valid.bits, (i >> 3) + 2);
      this.valid.bits.fill(0, old);
    }
    if (typeof v !== 'number' || Number.isNaN(v) || (this.kind !== 'f64' && !Number.isFinite(v))) {
      this.valid.nulls++;
      if (wide) {
        this.values[2 * i] = 0;
        this.values[2 * i + 1] = 0;
      } else this.values[i] = 0;
      return;
    }
    if (this.kind === 'i32' ? v !== (v | 0) : this.kind !== 'f64' && !Number.isSafeInteger(v)) {
      // Validation keeps such values out; a row that still carries one is refused, never wrapped around.
      throw new RangeError(`${v} does not fit a ${this.kind === 'i32' ? '32-bit integer' : '64-bit integer'} column`);
    }
    this.valid.set(i);
    if (wide) {
      // Two's complement halves of a safe integer (negative timestamps included).
      const hi = Math.floor(v / 4294967296);
      this.values[2 * i] = (v - hi * 4294967296) | 0;
      this.values[2 * i + 1] = hi | 0;
    } else this.values[i] = v + 0; // -0 stored as 0 (NEGATIVE_ZERO says why)
  }
  finish(): Data {
    const n = this.length;
    const common = { length: n, nullCount: this.valid.nulls, nullBitmap: this.valid.bitmap(n) };
    switch (this.kind) {
      case 'i32':
        return makeData({ type: new Int32(), ...common, data: (this.values as Int32Array).subarray(0, n) });
      case 'f64':
        return makeData({ type: new Float64(), ...common, data: (this.values as Float64Array).subarray(0, n) });
      case 'i64':
        return makeData({ type: new Int64(), ...common, data: new BigInt64Array(this.values.buffer, 0, n) });
      case 'ts':
        return makeData({ type: new TimestampMicrosecond(), ...common, data: new BigInt64Array(this.values.buffer, 0, n) });
    }
  }
}

export class BoolBuilder {
  values = new Uint8Array(256);
  readonly valid = new Validity();
  length = 0;
  reset(expected: number): void {
    this.values = grow(this.values, (expected >> 3) + 8);
    this.values.fill(0, 0, (expected >> 3) + 1);
    this.valid.reset(expected);
    this.length = 0;
  }
  push(v: unknown): void {
    const i = this.length++;
    if ((i >> 3) + 1 >= this.values.length) {
      const old = this.values.length;
      this.values = grow(this.values, (i >> 3) + 2);
      this.values.fill(0, old);
      const oldV = this.valid.bits.length;
      this.valid.bits = grow(this.valid.bits, (i >> 3) + 2);
      this.valid.bits.fill(0, oldV);
    }
    if (typeof v !== 'boolean') {
      this.valid.nulls++;
      return;
    }
    this.valid.set(i);
    if (v) this.values[i >> 3]! |= 1 << (i & 7);
  }
  finish(): Data {
    const n = this.length;
    return makeData({
      type: new Bool(),
      length: n,
      nullCount: this.valid.nulls,
      nullBitmap: this.valid.bitmap(n),
      data: this.values.subarray(0, (n + 7) >> 3),
    });
  }
}

/** List<Utf8> (tags) and Map<Utf8, Float64 | Utf8> (metrics, metadata): offsets over flat children. */
export class NestedBuilder {
  offsets = new Int32Array(1025);
  readonly valid = new Validity();
  readonly keys = new Utf8Builder();
  readonly strings = new Utf8Builder();
  numbers = new Float64Array(1024);
  length = 0;
  #entries = 0;
  constructor(readonly kind: 'tags' | 'map_f64' | 'map_utf8') {}
  reset(expected: number): void {
    this.offsets = grow(this.offsets, expected + 1);
    this.valid.reset(expected);
    this.keys.reset(expected);
    this.strings.reset(expected);
    this.length = 0;
    this.#entries = 0;
  }
  push(v: unknown): void {
    const i = this.length++;
    if (i + 2 > this.offsets.length) this.offsets = grow(this.offsets, i + 2);
    if ((i >> 3) + 1 >= this.valid.bits.length) {
      const old = this.valid.bits.length;
      this.valid.bits = grow(this.valid.bits, (i >> 3) + 2);
      this.valid.bits.fill(0, old);
    }
    if (v === null || v === undefined || typeof v !== 'object') {
      this.valid.nulls++;
      this.offsets[i + 1] = this.#entries;
      return;
    }
    this.valid.set(i);
    if (this.kind === 'tags') {
      for (const t of v as unknown[]) {
        this.strings.push(typeof t === 'string' ? t : String(t));
        this.#entries++;
      }
    } else if (this.kind === 'map_f64') {
      const m = v as Record<string, unknown>;
      for (const k in m) {
        const x = m[k];
        if (typeof x !== 'number') continue;
        if (this.#entries + 1 > this.numbers.length) this.numbers = grow(this.numbers, this.#entries + 1);
        this.keys.push(k);
        this.numbers[this.#entries++] = x + 0; // NEGATIVE_ZERO
      }
    } else {
      const m = v as Record<string, unknown>;
      for (const k in m) {
        const x = m[k];
        if (x === null || x === undefined) continue;
        this.keys.push(k);
        this.strings.push(typeof x === 'string' ? x : JSON.stringify(x));
        this.#entries++;
      }
    }
    this.offsets[i + 1] = this.#entries;
  }
  finish(type: DataType): Data {
    const n = this.length;
    const common = {
      length: n,
      nullCount: this.valid.nulls,
      nullBitmap: this.valid.bitmap(n),
      valueOffsets: this.offsets.subarray(0, n + 1),
    };
    if (this.kind === 'tags') return makeData({ type: type as List, ...common, child: this.strings.finish() });
    const entryType = (type as Map_).children[0]!.type as Struct;
    const values =
      this.kind === 'map_f64'
        ? makeData({ type: new Float64(), length: this.#entries, nullCount: 0, data: this.numbers.subarray(0, this.#entries) })
        : this.strings.finish();
    const entries = makeData({ type: entryType, length: this.#entries, nullCount: 0, children: [this.keys.finish(), values] });
    return makeData({ type: type as Map_, ...common, child: entries });
  }
}

export type ColumnBuilder = Utf8Builder | NumberBuilder | BoolBuilder | NestedBuilder;

export function builderFor(col: PhysicalColumn): ColumnBuilder {
  switch (col.kind) {
    case 'utf8':
      return new Utf8Builder();
    case 'bool':
      return new BoolBuilder();
    case 'tags':
    case 'map_f64':
    case 'map_utf8':
      return new NestedBuilder(col.kind);
    default:
      return new NumberBuilder(col.kind);
  }
}
