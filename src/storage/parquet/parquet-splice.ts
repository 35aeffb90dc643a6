// Joins Parquet files into one by copying their row groups' column chunks byte for byte, keeping a
// subset of columns, or taking a row group's columns from several files: no page is decoded or
// compressed again. An export of sealed segments is this:
// the segments' export columns, as stored. Every input must hold each kept column with the same
// schema as the first input (the "template", written by DuckDB with exactly the kept columns, in
// order); else SpliceMismatch is thrown and the caller writes the file the ordinary way. Page indexes
// (stored apart from the chunks) are left out, Bloom filters copied too; statistics, encodings and
// dictionaries travel with the chunks.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { decodeStruct, encodeStruct, T, type TField, type TList, type TStruct, type TValue } from './thrift-compact.js';

export class SpliceMismatch extends Error {}

const MAGIC = new TextEncoder().encode('PAR1');
/** Footer key naming how many row groups were copied from files other than the template (for tests and curious readers). */
export const SPLICE_KEY = 'tracelake.spliced_row_groups';

interface Footer {
  meta: TStruct;
  /** Top-level column name -> its schema elements (encoded, for comparison) and leaf column indexes. */
  columns: Map<string, { schema: TValue[]; encoded: string; leaves: number[] }>;
}

function readFooter(fd: number, path: string): Footer {
  const size = fstatSync(fd).size;
  const tail = Buffer.alloc(8);
  if (size < 12 || readSync(fd, tail, 0, 8, size - 8) !== 8 || tail.subarray(4).compare(MAGIC) !== 0)
    throw new SpliceMismatch(`${path} is not a Parquet file`);
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
    // Compared without field ids (SchemaElement field 9): segments carry them, DuckDB's other files do not.
    const comparable = (s: TStruct): TStruct => new Map([...s].filter(([k]) => k !== 9));
    columns.set(name, {
      schema: sub,
      encoded: Buffer.from(sub.map((s) => Buffer.from(encodeStruct(comparable(s as TStruct))).toString('hex')).join('/')).toString(),
      leaves,
    });
  }
  return { meta, columns };
}

const i64 = (v: number | bigint): TField => ({ type: T.I64, value: BigInt(v) });
const num = (f: TField | undefined): number => Number(f?.value ?? 0);

/** Where an output row group's columns come from: row group `group` of each file (the first that has a column gives it). */
export type GroupSources = readonly { path: string; group: number }[];

/**
 * Writes `out` holding the row groups of every file in `inputs` (in order), with the columns of
 * `inputs[0]` (the template) only. Returns the rows written.
 */
export function spliceParquet(out: string, inputs: readonly string[]): number {
  const groups: GroupSources[] = [];
  for (const path of inputs) {
    const fd = openSync(path, 'r');
    try {
      const n = ((readFooter(fd, path).meta.get(4)?.value as TList | undefined)?.items ?? []).length;
      for (let g = 0; g < n; g++) groups.push([{ path, group: g }]);
    } finally {
      closeSync(fd);
    }
  }
  return spliceGroups(out, inputs[0]!, groups);
}

/**
 * Writes `out` with the columns of the template file (a DuckDB file with no rows is enough), one row
 * group per entry of `groups`, each column copied from the first of its sources that has it; every
 * source of a group must have as many rows. Throws SpliceMismatch when a column's schema differs
 * from the template's or a group's sources disagree. Returns the rows written.
 */
export function spliceGroups(out: string, template: string, groups: readonly GroupSources[]): number {
  const paths = [...new Set([template, ...groups.flatMap((g) => g.map((x) => x.path))])];
  const fds = new Map(paths.map((p) => [p, openSync(p, 'r')]));
  const ofd = openSync(out, 'w');
  try {
    const footers = new Map(paths.map((p) => [p, readFooter(fds.get(p)!, p)]));
    const tpl = footers.get(template)!;
    const names = [...tpl.columns.keys()];
    let pos = 0;
    const write = (b: Uint8Array) => {
      for (let done = 0; done < b.length; ) done += writeSync(ofd, b, done, b.length - done);
      pos += b.length;
    };
    write(MAGIC);
    const written: TStruct[] = [];
    let rows = 0n;
    let copied = 0;
    let buf = Buffer.alloc(1 << 20);
    const blooms: { path: string; at: number; len: number; meta: TStruct }[] = [];
    for (const sources of groups) {
      const rgs = sources.map(({ path, group }) => {
        const g = ((footers.get(path)!.meta.get(4)?.value as TList | undefined)?.items ?? [])[group] as TStruct | undefined;
        if (!g) throw new SpliceMismatch(`${path} has no row group ${group}`);
        return g;
      });
      const n = rgs[0]!.get(3)!.value as bigint;
      if (rgs.some((g) => g.get(3)!.value !== n)) throw new SpliceMismatch('the sources of a row group differ in rows');
      if (!sources.some((x) => x.path === template)) copied++;
      const kept: TStruct[] = [];
      let compressed = 0;
      let uncompressed = 0;
      const groupStart = pos;
      for (const name of names) {
        const want = tpl.columns.get(name)!;
        const at = sources.findIndex((x) => footers.get(x.path)!.columns.has(name));
        if (at < 0) throw new SpliceMismatch(`no source of a row group has column ${name}`);
        const { path } = sources[at]!;
        const col = footers.get(path)!.columns.get(name)!;
        if (col.encoded !== want.encoded) throw new SpliceMismatch(`${path}: column ${name} differs from the template`);
        const chunks = (rgs[at]!.get(1)!.value as TList).items as TStruct[];
        for (const leaf of col.leaves) {
          const meta = chunks[leaf]!.get(3)!.value as TStruct;
          const dataAt = num(meta.get(9));
          const dictAt = meta.has(11) ? num(meta.get(11)) : dataAt;
          const start = Math.min(dataAt, dictAt);
          const len = num(meta.get(7));
          if (buf.length < len) buf = Buffer.alloc(len);
          if (readSync(fds.get(path)!, buf, 0, len, start) !== len) throw new Error(`${path}: short read of a column chunk`);
          const shift = pos - start;
          write(buf.subarray(0, len));
          const newMeta: TStruct = new Map(meta);
          newMeta.set(9, i64(dataAt + shift));
          if (meta.has(11)) newMeta.set(11, i64(dictAt + shift));
          if (meta.has(10)) newMeta.set(10, i64(num(meta.get(10)) + shift));
          // A Bloom filter is stored apart from the chunk: copied after the row groups (as DuckDB places
          // them) when its length is known, else left out (it is optional).
          if (meta.has(14) && meta.has(15)) blooms.push({ path, at: num(meta.get(14)), len: num(meta.get(15)), meta: newMeta });
          else {
            newMeta.delete(14);
            newMeta.delete(15);
          }
          // file_offset, then the column chunk's metadata; no page index (offsets 4-7 dropped).
          kept.push(
            new Map<number, TField>([
              [2, i64(pos - len)],
              [3, { type: T.STRUCT, value: newMeta }],
            ]),
          );
          compressed += len;
          uncompressed += num(meta.get(6));
        }
      }
      rows += n;
      written.push(
        new Map<number, TField>([
          [1, { type: T.LIST, value: { elemType: T.STRUCT, items: kept } }],
          [2, i64(uncompressed)],
          [3, i64(n)],
          [5, i64(groupStart)],
          [6, i64(compressed)],
          [7, { type: T.I16, value: written.length }],
        ]),
      );
    }
    for (const b of blooms) {
      if (buf.length < b.len) buf = Buffer.alloc(b.len);
      if (readSync(fds.get(b.path)!, buf, 0, b.len, b.at) !== b.len) throw new Error(`${b.path}: short read of a Bloom filter`);
      b.meta.set(14, i64(pos));
      write(buf.subarray(0, b.len));
    }
    const meta: TStruct = new Map(tpl.meta);
    meta.set(3, i64(rows));
    meta.set(4, { type: T.LIST, value: { elemType: T.STRUCT, items: written } });
    const kv = ((meta.get(5)?.value as TList | undefined)?.items ?? []).filter(
      (e) => new TextDecoder().decode((e as TStruct).get(1)!.value as Uint8Array) !== SPLICE_KEY,
    );
    const enc = new TextEncoder();
    kv.push(
      new Map<number, TField>([
        [1, { type: T.BINARY, value: enc.encode(SPLICE_KEY) }],
        [2, { type: T.BINARY, value: enc.encode(String(copied)) }],
      ]),
    );
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
    for (const fd of fds.values()) closeSync(fd);
  }
}

/** Rows of each row group of a Parquet file, in order (from its footer). */
export function rowGroupRows(path: string): number[] {
  const fd = openSync(path, 'r');
  try {
    return (((readFooter(fd, path).meta.get(4)?.value as TList | undefined)?.items ?? []) as TStruct[]).map((g) => Number(g.get(3)!.value));
  } finally {
    closeSync(fd);
  }
}
