// The Thrift compact protocol, generically: a Parquet footer (FileMetaData) decodes into structs of
// numbered, typed fields and encodes back byte for byte, so a footer can be edited (offsets, column
// lists) without a schema compiled from parquet.thrift. i64 values are bigints; i8/i16/i32 numbers.

export const T = { TRUE: 1, FALSE: 2, I8: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8, LIST: 9, SET: 10, MAP: 11, STRUCT: 12 } as const;

export type TValue = boolean | number | bigint | Uint8Array | TStruct | TList | TMap;
export interface TField {
  /** Compact type id (booleans: T.TRUE). */
  type: number;
  value: TValue;
}
/** A struct: field id -> field (encoded in ascending id order). */
export type TStruct = Map<number, TField>;
export interface TList {
  elemType: number;
  items: TValue[];
}
export interface TMap {
  keyType: number;
  valueType: number;
  entries: [TValue, TValue][];
}

export function decodeStruct(bytes: Uint8Array, from = 0): { value: TStruct; end: number } {
  const r = new Reader(bytes, from);
  const value = r.struct();
  return { value, end: r.pos };
}

export function encodeStruct(s: TStruct): Uint8Array {
  const w = new Writer();
  w.struct(s);
  return w.bytes();
}

class Reader {
  constructor(
    readonly b: Uint8Array,
    public pos: number,
  ) {}

  byte(): number {
    if (this.pos >= this.b.length) throw new Error('thrift: truncated');
    return this.b[this.pos++]!;
  }

  varint(): bigint {
    let shift = 0n;
    let out = 0n;
    for (;;) {
      const x = this.byte();
      out |= BigInt(x & 0x7f) << shift;
      if ((x & 0x80) === 0) return out;
      shift += 7n;
    }
  }

  zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  value(type: number): TValue {
    switch (type) {
      case T.TRUE:
        return true;
      case T.FALSE:
        return false;
      case T.I8: {
        const x = this.byte();
        return x > 127 ? x - 256 : x;
      }
      case T.I16:
      case T.I32:
        return Number(this.zigzag());
      case T.I64:
        return this.zigzag();
      case T.DOUBLE: {
        const v = new DataView(this.b.buffer, this.b.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case T.BINARY: {
        const n = Number(this.varint());
        if (this.pos + n > this.b.length) throw new Error('thrift: truncated');
        const v = this.b.slice(this.pos, this.pos + n);
        this.pos += n;
        return v;
      }
      case T.LIST:
      case T.SET: {
        const h = this.byte();
        let size = h >> 4;
        const elemType = h & 0x0f;
        if (size === 15) size = Number(this.varint());
        const items: TValue[] = [];
        // In lists a boolean is a byte of its own (1 true).
        for (let i = 0; i < size; i++) items.push(elemType === T.TRUE || elemType === T.FALSE ? this.byte() === 1 : this.value(elemType));
        return { elemType, items };
      }
      case T.MAP: {
        const size = Number(this.varint());
        if (size === 0) return { keyType: 0, valueType: 0, entries: [] };
        const kv = this.byte();
        const entries: [TValue, TValue][] = [];
        for (let i = 0; i < size; i++) entries.push([this.value(kv >> 4), this.value(kv & 0x0f)]);
        return { keyType: kv >> 4, valueType: kv & 0x0f, entries };
      }
      case T.STRUCT:
        return this.struct();
      default:
        throw new Error(`thrift: unknown type ${type}`);
    }
  }

  struct(): TStruct {
    const out: TStruct = new Map();
    let last = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return out;
      const type = h & 0x0f;
      const delta = h >> 4;
      const id = delta !== 0 ? last + delta : Number(this.zigzag());
      out.set(id, type === T.TRUE || type === T.FALSE ? { type: T.TRUE, value: type === T.TRUE } : { type, value: this.value(type) });
      last = id;
    }
  }
}

class Writer {
  #buf = new Uint8Array(1 << 16);
  #len = 0;

  #room(n: number): void {
    if (this.#len + n <= this.#buf.length) return;
    const next = new Uint8Array(Math.max(this.#buf.length * 2, this.#len + n));
    next.set(this.#buf.subarray(0, this.#len));
    this.#buf = next;
  }

  byte(x: number): void {
    this.#room(1);
    this.#buf[this.#len++] = x & 0xff;
  }

  raw(b: Uint8Array): void {
    this.#room(b.length);
    this.#buf.set(b, this.#len);
    this.#len += b.length;
  }

  varint(n: bigint): void {
    let x = n;
    while (x >= 0x80n) {
      this.byte(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.byte(Number(x));
  }

  zigzag(n: bigint): void {
    this.varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  }

  value(type: number, v: TValue): void {
    switch (type) {
      case T.I8:
        this.byte(v as number);
        return;
      case T.I16:
      case T.I32:
        this.zigzag(BigInt(v as number));
        return;
      case T.I64:
        this.zigzag(BigInt(v as bigint | number));
        return;
      case T.DOUBLE: {
        const b = new Uint8Array(8);
        new DataView(b.buffer).setFloat64(0, v as number, true);
        this.raw(b);
        return;
      }
      case T.BINARY: {
        const b = v as Uint8Array;
        this.varint(BigInt(b.length));
        this.raw(b);
        return;
      }
      case T.LIST:
      case T.SET: {
        const l = v as TList;
        if (l.items.length < 15) this.byte((l.items.length << 4) | l.elemType);
        else {
          this.byte(0xf0 | l.elemType);
          this.varint(BigInt(l.items.length));
        }
        for (const item of l.items) {
          if (l.elemType === T.TRUE || l.elemType === T.FALSE) this.byte(item ? 1 : 2);
          else this.value(l.elemType, item);
        }
        return;
      }
      case T.MAP: {
        const m = v as TMap;
        this.varint(BigInt(m.entries.length));
        if (m.entries.length === 0) return;
        this.byte((m.keyType << 4) | m.valueType);
        for (const [k, x] of m.entries) {
          this.value(m.keyType, k);
          this.value(m.valueType, x);
        }
        return;
      }
      case T.STRUCT:
        this.struct(v as TStruct);
        return;
      default:
        throw new Error(`thrift: cannot write type ${type}`);
    }
  }

  struct(s: TStruct): void {
    let last = 0;
    for (const id of [...s.keys()].sort((a, b) => a - b)) {
      const f = s.get(id)!;
      const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type;
      const delta = id - last;
      if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
      else {
        this.byte(type);
        this.zigzag(BigInt(id));
      }
      if (type !== T.TRUE && type !== T.FALSE) this.value(type, f.value);
      last = id;
    }
    this.byte(0);
  }

  bytes(): Uint8Array {
    return this.#buf.slice(0, this.#len);
  }
}
