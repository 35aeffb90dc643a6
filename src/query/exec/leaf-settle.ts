// Strategy: most spans a delete of leaves removes have a live sibling a few rows away in their segment
// (a segment holds a trace's spans together), and such a sibling keeps the parent: nothing more to
// ask about it. The child index's row file (storage/indexes/child-index.ts: parent hash and seq of
// every row, in row order) is read whole per segment; each match is found by its seq (the file says
// whether seqs ascend with the row number, else holds the row numbers in seq order) and its neighbours within `window` rows are compared by
// parent hash. Only the parents no neighbour keeps go on to the store-wide statements
// (record-delete.ts childlessOfLeaves), which are then a few thousand hashes instead of a million.
// Applies to: a span delete whose matches are all leaves, over a scope without retention cuts.
// Returns: the parent hashes of matches not settled so, and the matches it could not look at
// (rows in memory, segments without a usable row file, matches without a parent hash).
// Assumes: a sibling counts only if it is not among the matches and not dead in the snapshot (its
// dead seqs read exactly); equal hashes stand for equal parent ids, as everywhere the index is used.
import { closeSync, openSync, readSync } from 'node:fs';
import type { Connection } from '../../db/database.js';
import { childRowsHeader, childRowsSize, ROWS_HEADER } from '../../storage/indexes/child-index.js';
import { lowerBound } from '../../storage/memtable/seq-lists.js';
import type { Scope } from '../../storage/record-store.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { sql } from '../sql.js';

/** What local settling left for the store-wide statements. */
export interface Unsettled {
  /** Parent hashes (DuckDB's hash(), as unsigned 64-bit) of matches no neighbour settled, each once. */
  hashes: bigint[];
  /** Matches not looked at (their parents are found by the statements, from the indexes or memory). */
  rest: number[];
}

/** How far (rows, either side) a match's neighbours are compared. */
export const SETTLE_WINDOW = 64;

/** Null when the scope has no row files to read (retention cuts it). */
export async function settleLocally(
  c: Connection,
  snap: Snapshot,
  scope: Scope,
  matches: readonly number[],
  window = SETTLE_WINDOW,
): Promise<Unsettled | null> {
  const files = snap.childRowFiles({ ...scope, kinds: ['span'] });
  if (files === null) return null;
  const m = Float64Array.from(matches).sort();
  const dead = await sortedSeqs(c, sql`SELECT seq::DOUBLE AS seq FROM ${snap.deadSeqs} ORDER BY seq`);
  const seen = new Uint8Array(m.length);
  const hashes = new Set<bigint>();
  const rest: number[] = [];
  let space = new Uint8Array(0);
  // Rows the delete removes, of the segment at hand (cleared after each).
  let marks = new Uint8Array(0);
  for (const f of files) {
    const lo = lowerBound(m, f.min_seq);
    const hi = lowerBound(m, f.max_seq + 1);
    if (lo === hi) continue;
    const header = await childRowsHeader(c, f.path, f.rows);
    if (header === null) continue;
    // One buffer for every file (the largest yet): a fresh one per segment costs its pages again.
    const size = childRowsSize(f.rows, header.ascending);
    if (space.length < size) space = new Uint8Array(size);
    const buf = readWhole(f.path, space, size);
    // Row j: parent hash as two 32-bit halves at words 4j (low) and 4j+1, seq at double 2j+1.
    const words = new Uint32Array(buf.buffer, ROWS_HEADER, 4 * f.rows);
    const nums = new Float64Array(buf.buffer, ROWS_HEADER, 2 * f.rows);
    if (marks.length < f.rows) marks = new Uint8Array(f.rows);
    const gone = marks.subarray(0, f.rows);
    const order = header.ascending ? null : new Uint32Array(buf.buffer, ROWS_HEADER + 16 * f.rows, f.rows);
    const rows = locate(nums, order, f.rows, m, lo, hi, seen, gone);
    for (let k = 0; k < rows.length; k++) {
      const r = rows[k]!;
      const a = words[4 * r]!;
      const b = words[4 * r + 1]!;
      // No parent, or a hash of 0: the statements read it.
      if (a === 0 && b === 0) rest.push(nums[2 * r + 1]!);
      else if (!keptNearby(words, nums, gone, dead, r, window)) hashes.add((BigInt(b) << 32n) | BigInt(a));
    }
    for (let k = 0; k < rows.length; k++) gone[rows[k]!] = 0;
  }
  for (let i = 0; i < m.length; i++) if (seen[i] === 0) rest.push(m[i]!);
  return { hashes: [...hashes], rest };
}

/**
 * Rows (seqs in `nums`, at doubles 2j+1; ascending, or in the order of `order`'s row numbers) of the
 * matches m[lo..hi) found there; marks them in `seen` and `gone`.
 */
function locate(
  nums: Float64Array,
  order: Uint32Array | null,
  n: number,
  m: Float64Array,
  lo: number,
  hi: number,
  seen: Uint8Array,
  gone: Uint8Array,
): Int32Array {
  const out = new Int32Array(hi - lo);
  let k = 0;
  let a = 0;
  for (let i = lo; i < hi; i++) {
    // The matches ascend too: each search starts where the last ended.
    const seq = m[i]!;
    let b = n;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (nums[2 * (order ? order[mid]! : mid) + 1]! < seq) a = mid + 1;
      else b = mid;
    }
    const r = a < n ? (order ? order[a]! : a) : -1;
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
    if (below >= 0 && gone[below] === 0 && words[4 * below] === a && words[4 * below + 1] === b && !has(dead, nums[2 * below + 1]!))
      return true;
    const above = r + d;
    if (above < n && gone[above] === 0 && words[4 * above] === a && words[4 * above + 1] === b && !has(dead, nums[2 * above + 1]!))
      return true;
  }
  return false;
}

function has(sorted: Float64Array, q: number): boolean {
  if (sorted.length === 0) return false;
  const at = lowerBound(sorted, q);
  return at < sorted.length && sorted[at] === q;
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
    for (let at = 0; at < size; ) {
      const n = readSync(fd, buf, at, Math.min(size - at, 1 << 30), at);
      if (n === 0) throw new Error(`${path}: ends before ${size} bytes`);
      at += n;
    }
  } finally {
    closeSync(fd);
  }
  return buf;
}
