// Strategy: most spans a delete of leaves removes have a live sibling a few rows away in their segment
// (a segment holds a trace's spans together), and such a sibling keeps the parent: nothing more to
// ask about it. The child index's row file (storage/indexes/child-index.ts: parent hash and seq of
// every row, in row order) is read whole per segment; each match is found by its seq (the file says
// whether seqs ascend with the row number, else holds the row numbers in seq order) and its neighbours within `window` rows are compared by
// parent hash. Only the parents no neighbour keeps go on to the store-wide statements
// (record-delete.ts childlessOfLeaves), which are then a few thousand hashes instead of a million.
// Applies to: a span delete whose matches are all leaves, over a scope without retention cuts.
// Matches a value index found (delete-hits.ts) come as row numbers instead: the chunks around them
// are read the same way, and their seqs read there.
// Returns: the parent hashes of matches not settled so, and the matches it could not look at
// (rows in memory, segments without a usable row file, matches without a parent hash).
// Assumes: a sibling counts only if it is not among the matches and not dead in the snapshot (its
// dead seqs read exactly); equal hashes stand for equal parent ids, as everywhere the index is used.
import { closeSync, openSync } from 'node:fs';
import type { Connection } from '../../db/database.js';
import { childRowsHeader, childRowsSize, ROWS_HEADER } from '../../storage/indexes/child-index.js';
import { readFully, ScratchBuffer, withFile } from '../../storage/fs-util.js';
import { ascending, lowerBound, sortedHas } from '../../storage/memtable/seq-lists.js';
import type { Scope } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { type Sql, sql } from '../sql.js';

/** What local settling left for the store-wide statements. */
export interface Unsettled {
  /** Parent hashes (DuckDB's hash(), as unsigned 64-bit) of matches no neighbour settled, each once. */
  hashes: bigint[];
  /** Matches not looked at (their parents are found by the statements, from the indexes or memory). */
  rest: number[];
  /** The seqs of the matches given by row number, in the files' order and each file's row order. */
  seqs: number[];
}

/** How far (rows, either side) a match's neighbours are compared. */
export const SETTLE_WINDOW = 64;

/** Rows of an ascending row file read at a time (4 MiB, plus the window either side). */
export const CHUNK_ROWS = 1 << 18;

/** Where chunks of row files are read, with a byte a row for the removed marks (a delete reads one file at a time). */
const chunks = new ScratchBuffer(17 * (CHUNK_ROWS + 2 * SETTLE_WINDOW));

/** What settling one segment's matches adds to: the parents left and the matches it found (by index in the sorted matches). */
interface Tally {
  readonly hashes: Set<bigint>;
  readonly rest: number[];
  readonly seen: Uint8Array;
  readonly dead: Float64Array;
  readonly window: number;
}

/** Matches given by row number, and the snapshot's dead seqs when the caller has read them (deadSeqsOf). */
export interface ByRow {
  /** Ascending row numbers by row file path: every match of those segments, none of them in `matches`, dead rows among them (left out here). */
  readonly rows: ReadonlyMap<string, Uint32Array>;
  readonly dead: Float64Array;
}

/** The snapshot's dead seqs, ascending. */
export function deadSeqsOf(c: Connection, snap: Snapshot): Promise<Float64Array> {
  return seqsAscending(c, snap.deadSeqs);
}

/** The seqs of a relation with a seq column (the snapshot's dead or childless seqs), ascending. */
export function seqsAscending(c: Connection, relation: Sql): Promise<Float64Array> {
  return sortedSeqs(c, sql`SELECT seq::DOUBLE AS seq FROM ${relation} ORDER BY seq`);
}

/** Null when the scope has no row files to read (retention cuts it). `matches`: seqs. */
export async function settleLocally(
  c: Connection,
  snap: Snapshot,
  scope: Scope,
  matches: readonly number[],
  window = SETTLE_WINDOW,
  chunkRows = CHUNK_ROWS,
  byRow?: ByRow,
): Promise<Unsettled | null> {
  const files = snap.childRowFiles({ ...scope, kinds: ['span'] });
  if (files === null) return null;
  const m = Float64Array.from(matches);
  if (!ascending(m)) m.sort();
  const dead = byRow?.dead ?? (await deadSeqsOf(c, snap));
  const t: Tally = { hashes: new Set<bigint>(), rest: [], seen: new Uint8Array(m.length), dead, window };
  const seqs: number[] = [];
  const chunk = Math.max(1, Math.trunc(chunkRows));
  let space = new Uint8Array(0);
  // Rows the delete removes, of the segment at hand (cleared after each).
  let marks = new Uint8Array(0);
  for (const f of files) {
    const at = byRow?.rows.get(f.path);
    if (at !== undefined) {
      settleRows(f.path, f.rows, at, chunk, t, seqs);
      continue;
    }
    const lo = lowerBound(m, f.min_seq);
    const hi = lowerBound(m, f.max_seq + 1);
    if (lo === hi) continue;
    const header = await childRowsHeader(c, f.path, f.rows);
    if (header === null) continue;
    if (header.ascending) {
      settleInChunks(f.path, f.rows, m, lo, hi, chunk, t);
      continue;
    }
    // One buffer for every file (the largest yet): a fresh one per segment costs its pages again.
    const size = childRowsSize(f.rows, false);
    if (space.length < size) space = new Uint8Array(size);
    const buf = readWhole(f.path, space, size);
    if (marks.length < f.rows) marks = new Uint8Array(f.rows);
    const gone = marks.subarray(0, f.rows);
    const rows = rowsOf(buf, ROWS_HEADER, f.rows);
    const order = new Uint32Array(buf.buffer, buf.byteOffset + ROWS_HEADER + 16 * f.rows, f.rows);
    const found = locate(rows.nums, order, m, lo, hi, t.seen, gone);
    settle(rows, gone, found, t);
    for (const r of found) gone[r] = 0;
  }
  for (let i = 0; i < m.length; i++) if (t.seen[i] === 0) t.rest.push(m[i]!);
  return { hashes: [...t.hashes], rest: t.rest, seqs };
}

/** Row j of a row file's rows section: parent hash as two 32-bit halves at words 4j (low) and 4j+1, seq at double 2j+1. */
interface Rows {
  readonly words: Uint32Array;
  readonly nums: Float64Array;
}

function rowsOf(buf: Uint8Array, offset: number, n: number): Rows {
  return {
    words: new Uint32Array(buf.buffer, buf.byteOffset + offset, 4 * n),
    nums: new Float64Array(buf.buffer, buf.byteOffset + offset, 2 * n),
  };
}

/** Adds the parents of the found rows no neighbour keeps to the tally; a row without a parent hash goes to `rest`. */
function settle({ words, nums }: Rows, gone: Uint8Array, found: ArrayLike<number>, t: Tally): void {
  for (let k = 0; k < found.length; k++) {
    const r = found[k]!;
    const a = words[4 * r]!;
    const b = words[4 * r + 1]!;
    // No parent, or a hash of 0: the statements read it.
    if (a === 0 && b === 0) t.rest.push(nums[2 * r + 1]!);
    else if (!keptNearby(words, nums, gone, t.dead, r, t.window)) t.hashes.add((BigInt(b) << 32n) | BigInt(a));
  }
}

/**
 * Settles the matches m[lo..hi) in an ascending row file of `n` rows, CHUNK_ROWS (`chunk`) at a time:
 * each chunk is read with the window's rows either side (their matches marked removed too), and its
 * matches found by walking its seqs and the matches together. A chunk whose last loaded seq is below
 * the next match is not read.
 */
function settleInChunks(path: string, n: number, m: Float64Array, lo: number, hi: number, chunk: number, t: Tally): void {
  const w = t.window;
  // The last loaded row's seq, read before the chunk (a chunk without matches is skipped).
  const last = new Float64Array(1);
  const lastBytes = new Uint8Array(last.buffer);
  withFile(path, (fd) => {
    let next = lo;
    for (let a = 0; a < n && next < hi; a += chunk) {
      const to = Math.min(n, a + chunk + w);
      if (readFully(fd, lastBytes, ROWS_HEADER + 16 * (to - 1) + 8) !== 8) throw new Error(`${path}: ends before ${to} rows`);
      if (m[next]! > last[0]!) continue;
      const at = loadChunk(fd, n, a, chunk, w);
      if (at === null) throw new Error(`${path}: ends before ${to} rows`);
      const { b, from, len, rows, gone } = at;
      const nums = rows.nums;
      let k = next;
      while (k < hi && m[k]! < nums[1]!) k++;
      next = k;
      const found: number[] = [];
      for (let j = 0; k < hi && j < len; ) {
        const seq = nums[2 * j + 1]!;
        const q = m[k]!;
        // A match between two rows' seqs is another segment's.
        if (q < seq) k++;
        else if (q > seq) j = nextRow(nums, j, len, q);
        else {
          gone[j] = 1;
          if (from + j >= a && from + j < b) {
            t.seen[k] = 1;
            found.push(j);
          }
          j++;
          k++;
        }
      }
      settle(rows, gone, found, t);
    }
    return true;
  });
}

/**
 * Rows [a, a + chunk) of a row file of `n` rows and `w` more either side (rows from..to, `len` of
 * them), read into the kept buffer, with a byte a row for the removed marks (cleared); null when the
 * file ends before them.
 */
function loadChunk(fd: number, n: number, a: number, chunk: number, w: number) {
  const b = Math.min(n, a + chunk);
  const from = Math.max(0, a - w);
  const to = Math.min(n, b + w);
  const len = to - from;
  const buf = chunks.get(17 * len);
  if (readFully(fd, buf.subarray(0, 16 * len), ROWS_HEADER + 16 * from) !== 16 * len) return null;
  return { b, from, to, len, rows: rowsOf(buf, 0, len), gone: buf.subarray(16 * len, 17 * len).fill(0) };
}

/**
 * Settles the matches at `rows` (ascending row numbers) of a row file of `n` rows, a chunk of rows at
 * a time with the window's rows either side, as settleInChunks; their seqs go to `seqs`, but those
 * of dead rows, which are left out. Throws when the file cannot be read: these matches are known
 * nowhere else.
 */
function settleRows(path: string, n: number, rows: Uint32Array, chunk: number, t: Tally, seqs: number[]): void {
  const w = t.window;
  const done = withFile(path, (fd) => {
    for (let i = 0; i < rows.length; ) {
      const at = loadChunk(fd, n, rows[i]! - (rows[i]! % chunk), chunk, w);
      if (at === null) return null;
      const { b, from, to, rows: loaded, gone } = at;
      for (let k = lowerBound(rows, from); k < rows.length && rows[k]! < to; k++) gone[rows[k]! - from] = 1;
      const found: number[] = [];
      for (; i < rows.length && rows[i]! < b; i++) {
        const j = rows[i]! - from;
        const seq = loaded.nums[2 * j + 1]!;
        // A dead version the index still lists: no match.
        if (sortedHas(t.dead, seq)) continue;
        found.push(j);
        seqs.push(seq);
      }
      settle(loaded, gone, found, t);
    }
    return true;
  });
  if (done === null) throw new Error(`${path}: its rows could not be read`);
}

/**
 * The first row after `j` (whose seq is below `q`) with a seq of `q` or more, else `len`: a gallop
 * then a binary search, since matches (1% of rows in a peer delete) sit far apart among the rows.
 */
function nextRow(nums: Float64Array, j: number, len: number, q: number): number {
  let lo = j + 1;
  let hi = j + 1;
  for (let step = 1; hi < len && nums[2 * hi + 1]! < q; step *= 2) {
    lo = hi + 1;
    hi = j + 2 * step;
  }
  if (hi > len) hi = len;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (nums[2 * mid + 1]! < q) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Rows (seqs in `nums`, at doubles 2j+1, in the order of `order`'s row numbers) of the matches
 * m[lo..hi) found there; marks them in `seen` and `gone`.
 */
function locate(
  nums: Float64Array,
  order: Uint32Array,
  m: Float64Array,
  lo: number,
  hi: number,
  seen: Uint8Array,
  gone: Uint8Array,
): Int32Array {
  const n = order.length;
  const out = new Int32Array(hi - lo);
  let k = 0;
  let a = 0;
  for (let i = lo; i < hi; i++) {
    // The matches ascend too: each search starts where the last ended.
    const seq = m[i]!;
    let b = n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (nums[2 * order[mid]! + 1]! < seq) a = mid + 1;
      else b = mid;
    }
    const r = a < n ? order[a]! : -1;
    if (r >= 0 && nums[2 * r + 1] === seq) {
      seen[i] = 1;
      gone[r] = 1;
      out[k++] = r;
    }
  }
  return out.subarray(0, k);
}

/** Whether a row within `window` rows of row r has r's parent hash and is neither removed nor dead. */
function keptNearby(words: Uint32Array, nums: Float64Array, gone: Uint8Array, dead: Float64Array, r: number, window: number): boolean {
  const a = words[4 * r]!;
  const b = words[4 * r + 1]!;
  const n = gone.length;
  for (let d = 1; d <= window; d++) {
    const below = r - d;
    if (below >= 0 && gone[below] === 0 && words[4 * below] === a && words[4 * below + 1] === b && !sortedHas(dead, nums[2 * below + 1]!))
      return true;
    const above = r + d;
    if (above < n && gone[above] === 0 && words[4 * above] === a && words[4 * above + 1] === b && !sortedHas(dead, nums[2 * above + 1]!))
      return true;
  }
  return false;
}

async function sortedSeqs(c: Connection, q: ReturnType<typeof sql>): Promise<Float64Array> {
  const parts: Float64Array[] = [];
  for await (const [col] of c.fixedChunks(q)) parts.push(new Float64Array(col!.buffer, col!.byteOffset, col!.length / 8));
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The first `size` bytes of `path`, read into `buf`. */
function readWhole(path: string, buf: Uint8Array, size: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    if (readFully(fd, buf.subarray(0, size), 0) !== size) throw new Error(`${path}: ends before ${size} bytes`);
  } finally {
    closeSync(fd);
  }
  return buf;
}
