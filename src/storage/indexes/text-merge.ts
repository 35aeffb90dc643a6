// A merged segment's text index made from its inputs' index files instead of its text. A merge
// (segments/merge.ts) writes its inputs' rows one input after another, less the rows it drops, so each
// token's postings carry over with their rows renumbered, and each merged row group's trigram set is
// the union of the sets of the input row groups its rows came from: a superset, so row-group skipping
// stays exact (it may skip a little less). Reading and tokenising the text again cost ~24 µs a row at
// every merge level; this reads ~1 byte a posting. The renumbering is checked, not assumed: the merged
// file's seqs must be its inputs' seqs in order, less dropped ones. Anything else (an input without a
// checked index, a row out of place) answers false and the caller builds from the text.
import { closeSync, openSync, readSync, rmSync } from 'node:fs';
import type { Connection } from '../../db/database.js';
import { sql } from '../../query/sql.js';
import { FileSink } from './file-sink.js';
import { RunFile, type RunSections } from './posting-runs.js';
import {
  encodeSet,
  type KeySet,
  buildTextIndexFiles,
  RUN_BYTES,
  TEXT_COLUMNS,
  type TextIndexWriter,
  TIX_MAGIC,
  textIndexOf,
  tokenIndexPath,
  type TextIndex,
  WORDS,
} from './text-index.js';
import { TokenBuilder, writeTokenHead } from './token-builder.js';
import { loadTokenIndex, type TokenColumn, type TokenIndex } from './token-index.js';
import { indexChecked } from './unchecked-indexes.js';

export interface MergeInput {
  /** The input segment's absolute path. */
  readonly abs: string;
  /** Its rows per row group (its manifest entry's). */
  readonly rowGroups: readonly number[];
}

export interface MergedFrom {
  /** The inputs in the order the merge wrote their rows. */
  readonly inputs: readonly MergeInput[];
  /** Seqs of input rows the merge left out. */
  readonly dropped: ReadonlySet<number>;
}

/** The seqs of a segment's rows in row order. */
async function seqsOf(conn: Connection, abs: string): Promise<Float64Array> {
  const parts: Float64Array[] = [];
  let n = 0;
  for await (const [s] of conn.fixedChunks(sql`SELECT seq::DOUBLE AS seq FROM read_parquet(${abs}, hive_partitioning = false)`)) {
    const part = new Float64Array(s!.buffer, s!.byteOffset, s!.length / 8);
    parts.push(part);
    n += part.length;
  }
  const out = new Float64Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * Where each input row went: per input, its rows' merged row numbers (-1 for a dropped row), and per
 * merged row group the first and last input row it holds, numbered across the inputs in order. Null
 * when the merged file is not its inputs in order less dropped rows.
 */
async function rowMap(
  conn: Connection,
  abs: string,
  from: MergedFrom,
  groups: readonly number[],
): Promise<{ maps: Int32Array[]; firstSrc: Float64Array; lastSrc: Float64Array } | null> {
  const merged = await seqsOf(conn, abs);
  const firstSrc = new Float64Array(groups.length);
  const lastSrc = new Float64Array(groups.length);
  const maps: Int32Array[] = [];
  let j = 0;
  let g = 0;
  let groupStart = 0;
  let base = 0;
  for (const input of from.inputs) {
    const seqs = await seqsOf(conn, input.abs);
    const map = new Int32Array(seqs.length);
    for (let r = 0; r < seqs.length; r++) {
      if (j < merged.length && merged[j] === seqs[r]) {
        if (j === groupStart) firstSrc[g] = base + r;
        if (j === groupStart + groups[g]! - 1) {
          lastSrc[g] = base + r;
          groupStart += groups[g++]!;
        }
        map[r] = j++;
      } else if (from.dropped.has(seqs[r]!)) map[r] = -1;
      else return null;
    }
    maps.push(map);
    base += seqs.length;
  }
  return j === merged.length && g === groups.length ? { maps, firstSrc, lastSrc } : null;
}

function addSet(set: KeySet, bits: Uint32Array): void {
  if ('bits' in set) {
    for (let w = 0; w < WORDS; w++) bits[w]! |= set.bits[w]!;
    return;
  }
  for (const k of set.keys) bits[k >>> 5]! |= 1 << (k & 31);
}

/** Writes the merged trigram sets: each merged row group's, per column, the union of its source row groups'. */
function writeSets(
  path: string,
  groups: readonly number[],
  inputs: readonly TextIndex[],
  firstSrc: Float64Array,
  lastSrc: Float64Array,
): void {
  // The input row groups in merged order, each with its first and last row numbered across the inputs.
  const src: { sets: readonly KeySet[]; from: number; to: number }[] = [];
  let base = 0;
  for (const ix of inputs) {
    ix.rows.forEach((n, h) => {
      src.push({ sets: ix.sets[h]!, from: base, to: base + n - 1 });
      base += n;
    });
  }
  const bits = new Uint32Array(WORDS);
  const out = new FileSink(path);
  try {
    out.u32(TIX_MAGIC);
    out.u32(groups.length);
    for (const n of groups) out.u32(n);
    let h = 0;
    for (let g = 0; g < groups.length; g++) {
      while (src[h]!.to < firstSrc[g]!) h++;
      for (let c = 0; c < TEXT_COLUMNS.length; c++) {
        for (let k = h; k < src.length && src[k]!.from <= lastSrc[g]!; k++) addSet(src[k]!.sets[c]!, bits);
        out.write(encodeSet(bits));
      }
    }
    out.finishWithCrc();
  } catch (err) {
    out.abandon();
    throw err;
  }
}

/** Sequential reads of one column's postings (tokens in id order), a few MB at a time. */
class PostingReader {
  #fd: number;
  #buf = Buffer.allocUnsafe(4 << 20);
  #at = 0;
  #len = 0;
  readonly #end: number;

  constructor(fd: number, end: number) {
    this.#fd = fd;
    this.#end = end;
  }

  /** The buffer holding bytes [at, at + len) of the file, and where they start in it. */
  bytes(at: number, len: number): { buf: Buffer; off: number } {
    if (at < this.#at || at + len > this.#at + this.#len) {
      if (len > this.#buf.length) this.#buf = Buffer.allocUnsafe(len);
      const n = Math.min(this.#buf.length, this.#end - at);
      if (readSync(this.#fd, this.#buf, 0, n, at) !== n) throw new Error('token index: short read');
      this.#at = at;
      this.#len = n;
    }
    return { buf: this.#buf, off: at - this.#at };
  }
}

/** Adds one input column's postings to the merged column, rows renumbered; `room` spills when memory asks. */
function carry(ix: TokenIndex, col: TokenColumn, map: Int32Array, into: TokenBuilder, room: () => void): void {
  const n = col.counts.length;
  const fd = openSync(ix.path, 'r');
  try {
    const reader = new PostingReader(fd, col.at[n]!);
    for (let t = 0; t < n; t++) {
      const { buf, off } = reader.bytes(col.at[t]!, col.at[t + 1]! - col.at[t]!);
      let o = off;
      let row = -1;
      let id = -1;
      for (let k = col.counts[t]!; k > 0; k--) {
        let d = 0;
        let mul = 1;
        for (;;) {
          const b = buf[o++]!;
          d += (b & 0x7f) * mul;
          if (b < 0x80) break;
          mul *= 128;
        }
        row += d;
        const to = map[row]!;
        if (to < 0) continue;
        // A token all of whose rows were dropped is left out, as a build from the text leaves it.
        if (id < 0) id = into.idOf(col.dict, col.starts[t]!, col.starts[t + 1]! - col.starts[t]! - 1);
        into.post(id, to);
      }
      if ((t & 1023) === 1023) room();
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the text index of a merged segment (`abs`) from its inputs' index files to `to` (not synced).
 * Returns false, leaving no file, when it cannot (the caller builds from the text then).
 */
export async function mergeTextIndexFiles(
  conn: Connection,
  abs: string,
  from: MergedFrom,
  to: { readonly tix: string; readonly tok: string },
  runBytes = RUN_BYTES,
): Promise<boolean> {
  const sets: TextIndex[] = [];
  const tokens: TokenIndex[] = [];
  for (const input of from.inputs) {
    const rows = input.rowGroups.reduce((a, b) => a + b, 0);
    const ix = input.rowGroups.length > 0 ? textIndexOf(input.abs, input.rowGroups) : null;
    const tok = indexChecked('tokens', input.abs) ? loadTokenIndex(tokenIndexPath(input.abs)) : null;
    if (ix === null || tok === null || tok.rows !== rows || tok.columns !== TEXT_COLUMNS.length) return false;
    sets.push(ix);
    tokens.push(tok);
  }
  const columns: TokenColumn[][] = [];
  for (const tok of tokens) {
    const cols = TEXT_COLUMNS.map((_, c) => tok.column(c));
    if (cols.some((c) => c === null)) return false;
    columns.push(cols as TokenColumn[]);
  }
  const groups = (
    await conn.all(sql`SELECT row_group_num_rows AS n FROM parquet_metadata(${abs}) WHERE path_in_schema = 'seq' ORDER BY row_group_id`)
  ).map((m) => Number(m['n']));
  const placed = await rowMap(conn, abs, from, groups);
  if (placed === null) return false;
  const builders = TEXT_COLUMNS.map(() => new TokenBuilder());
  let run: RunFile | null = null;
  const runs: RunSections[] = [];
  const room = () => {
    if (builders.reduce((sum, b) => sum + b.heldBytes, 0) <= runBytes) return;
    run ??= new RunFile(`${to.tok}.run-${process.pid}`);
    const r = run;
    runs.push(builders.map((b) => b.spill(r)));
  };
  try {
    writeSets(to.tix, groups, sets, placed.firstSrc, placed.lastSrc);
    tokens.forEach((tok, k) => {
      for (let c = 0; c < TEXT_COLUMNS.length; c++) carry(tok, columns[k]![c]!, placed.maps[k]!, builders[c]!, room);
    });
    const out = new FileSink(to.tok);
    try {
      writeTokenHead(
        out,
        groups.reduce((a, b) => a + b, 0),
        builders.length,
      );
      for (let c = 0; c < builders.length; c++) {
        const held = run as RunFile | null;
        const readers = held
          ? held.readers(
              runs.map((r) => r[c]!),
              Math.max(4096, Math.min(1 << 20, runBytes / 4 / runs.length)),
            )
          : [];
        builders[c]!.writeSection(out, readers);
      }
      out.finishWithCrc();
    } catch (err) {
      out.abandon();
      throw err;
    }
    return true;
  } catch (err) {
    rmSync(to.tix, { force: true });
    rmSync(to.tok, { force: true });
    throw err;
  } finally {
    (run as RunFile | null)?.close();
  }
}

/** A writer for writeTextIndex: from the merge's inputs when it can, else from the merged file's text. */
export function mergedTextIndex(conn: Connection, abs: string, from: MergedFrom): TextIndexWriter {
  return async (to) => {
    if (!(await mergeTextIndexFiles(conn, abs, from, to))) await buildTextIndexFiles(conn, abs, to);
  };
}
