// Joins Parquet files into one by copying their row groups' column chunks byte for byte, keeping a
// subset of columns: no page is decoded or compressed again. An export of sealed segments is this:
// the segments' export columns, as stored. Every input must hold each kept column with the same
// schema as the first input (the "template", written by DuckDB with exactly the kept columns, in
// order); else SpliceMismatch is thrown and the caller writes the file the ordinary way. Page indexes
// and Bloom filters (stored apart from the chunks) are left out; statistics, encodings and
// dictionaries travel with the chunks.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { decodeStruct, encodeStruct, T, type TField, type TList, type TStruct, type TValue } from './thrift-compact.js';

export class SpliceMismatch extends Error {}

const MAGIC = new TextEncoder().encode('PAR1');
/** Footer key naming how many row groups were copied (for tests and curious readers). */
export const SPLICE_KEY = 'tracelake.spliced_row_groups';

interface Footer {
  meta: TStruct;
  /** Top-level column name -> its schema elements (encoded, for comparison) and leaf column indexes. */
  columns: Map<string, { schema: TValue[]; encoded: string; leaves: number[] }>;
}

function readFooter(fd: number, path: string): Footer {
  const size = fstatSync(fd).size;
  const tail = Buffer.alloc(8);
  if (size < 12 || readSync(fd, tail, 0, 8, size - 8) !== 8 || tail.subarray(4).compare(MAGIC) !== 0) throw new SpliceMismatch(`${path} is not a Parquet file`);
  const len = tail.readUInt32LE(0);
  const buf = Buffer.alloc(len);
  readSync(fd, buf, 0, len, size - 8 - len);
  const meta = decodeStruct(buf).value;
  const schema = (meta.get(2)!.value as TList).items as TStruct[];
  const columns = new Map<string, { schema: TValue[]; encoded: string; leaves: number[] }>();
  // Depth first: the root, then each top-level column's subtree (num_children, field 5, tells its size).
  let at = 1;
  let leaf = 0;
  const rootChildren = Number(schema[0]!.get(5)?.value ?? 0);
  for (let c = 0; c < rootChildren; c++) {
    const start = at;
    const leaves: number[] = [];
    let pending = 1;
    while (pending > 0) {
      const el = schema[at++]!;
      pending -= 1;
      const kids = Number(el.get(5)?.value ?? 0);
      if (kids === 0) leaves.push(leaf++);
      pending += kids;
    }
    const sub = schema.slice(start, at);
    const name = new TextDecoder().decode(sub[0]!.get(4)!.value as Uint8Array);
    columns.set(name, { schema: sub, encoded: Buffer.from(sub.map((s) => Buffer.from(encodeStruct(s as TStruct)).toString('hex')).join('/')).toString(), leaves });
  }
  return { meta, columns };
}

const i64 = (v: number | bigint): TField => ({ type: T.I64, value: BigInt(v) });
const num = (f: TField | undefined): number => Number(f?.value ?? 0);

/**
 * Writes `out` holding the row groups of every file in `inputs` (in order), with the columns of
 * `inputs[0]` (the template) only. Returns the rows written.
 */
export function spliceParquet(out: string, inputs: readonly string[]): number {
  const fds = inputs.map((p) => openSync(p, 'r'));
  const ofd = openSync(out, 'w');
  try {
    const footers = inputs.map((p, i) => readFooter(fds[i]!, p));
    const template = footers[0]!;
    const names = [...template.columns.keys()];
    for (const [i, f] of footers.entries()) {
      for (const name of names) {
        if (f.columns.get(name)?.encoded !== template.columns.get(name)!.encoded) throw new SpliceMismatch(`${inputs[i]}: column ${name} differs from the template`);
      }
    }
    let pos = 0;
    const write = (b: Uint8Array) => {
      for (let done = 0; done < b.length; ) done += writeSync(ofd, b, done, b.length - done);
      pos += b.length;
    };
    write(MAGIC);
    const groups: TStruct[] = [];
    let rows = 0n;
    let buf = Buffer.alloc(1 << 20);
    for (const [i, f] of footers.entries()) {
      const fileGroups = ((f.meta.get(4)?.value as TList | undefined)?.items ?? []) as TStruct[];
      for (const g of fileGroups) {
        const chunks = (g.get(1)!.value as TList).items as TStruct[];
        const kept: TStruct[] = [];
        let compressed = 0;
        let uncompressed = 0;
        const groupStart = pos;
        for (const name of names) {
          for (const leaf of f.columns.get(name)!.leaves) {
            const chunk = chunks[leaf]!;
            const meta = chunk.get(3)!.value as TStruct;
            const dataAt = num(meta.get(9));
            const dictAt = meta.has(11) ? num(meta.get(11)) : dataAt;
            const start = Math.min(dataAt, dictAt);
            const len = num(meta.get(7));
            if (buf.length < len) buf = Buffer.alloc(len);
            if (readSync(fds[i]!, buf, 0, len, start) !== len) throw new Error(`${inputs[i]}: short read of a column chunk`);
            const shift = pos - start;
            write(buf.subarray(0, len));
            const newMeta: TStruct = new Map(meta);
            newMeta.set(9, i64(dataAt + shift));
            if (meta.has(11)) newMeta.set(11, i64(dictAt + shift));
            if (meta.has(10)) newMeta.set(10, i64(num(meta.get(10)) + shift));
            // Bloom filter: stored outside the chunk, not copied.
            newMeta.delete(14);
            newMeta.delete(15);
            // file_offset, then the column chunk's metadata; no page index (offsets 4-7 dropped).
            kept.push(new Map<number, TField>([
              [2, i64(pos - len)],
              [3, { type: T.STRUCT, value: newMeta }],
            ]));
            compressed += len;
            uncompressed += num(meta.get(6));
          }
        }
        const n = g.get(3)!.value as bigint;
        rows += n;
        groups.push(new Map<number, TField>([
          [1, { type: T.LIST, value: { elemType: T.STRUCT, items: kept } }],
          [2, i64(uncompressed)],
          [3, i64(n)],
          [5, i64(groupStart)],
          [6, i64(compressed)],
          [7, { type: T.I16, value: groups.length }],
        ]));
      }
    }
    const meta: TStruct = new Map(template.meta);
    meta.set(3, i64(rows));
    meta.set(4, { type: T.LIST, value: { elemType: T.STRUCT, items: groups } });
    const kv = ((meta.get(5)?.value as TList | undefined)?.items ?? []).filter((e) => new TextDecoder().decode((e as TStruct).get(1)!.value as Uint8Array) !== SPLICE_KEY);
    const enc = new TextEncoder();
    kv.push(new Map<number, TField>([
      [1, { type: T.BINARY, value: enc.encode(SPLICE_KEY) }],
      [2, { type: T.BINARY, value: enc.encode(String(groups.length - (((template.meta.get(4)?.value as TList | undefined)?.items.length) ?? 0))) }],
    ]));
    meta.set(5, { type: T.LIST, value: { elemType: T.STRUCT, items: kv } });
    const footer = encodeStruct(meta);
    write(footer);
    const len = Buffer.alloc(4);
    len.writeUInt32LE(footer.length, 0);
    write(len);
    write(MAGIC);
    return Number(rows);
  } finally {
    closeSync(ofd);
    for (const fd of fds) closeSync(fd);
  }
}
