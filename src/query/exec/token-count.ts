// Strategy: counts answered from the segments' token indexes (src/storage/indexes/token-index.ts)
// without reading the text. The matching rows of a segment are the union of the postings of the
// tokens containing the needle (intersected across leaves), less its dead rows (their places in the
// file, from its dead-row list); a segment retention cuts partly has its matching rows checked by
// DuckDB (reading only seq and created_at of them).
// Applies when: the filter is one case-insensitive `contains` of ASCII letters and digits on name,
// input or output, or an AND of such leaves, and some segment in scope has a token index.
// Returns: the count (memory tables and segments without an index counted by the plan's own query,
// as count-cache.ts does), or null (then the caller counts as usual).
// Assumes: a token index lists its segment's rows by file row number (it is written with the segment);
// a column found damaged when first read leaves its segment to the plain count.
import type { SqlRunner } from '../../db/database.js';
import { sql } from '../sql.js';
import type { Expr } from '../filter-ast.js';
import { countQuery, type PlanInput } from '../plan.js';
import type { Scope } from '../../storage/record-store.js';
import type { SegmentEntry } from '../../storage/manifest/manifest.js';
import type { Snapshot } from '../../storage/snapshot/snapshot.js';
import { TEXT_COLUMNS, tokenIndexOf } from '../../storage/indexes/text-index.js';
import { countSet, rowsOf } from './value-rows.js';
import { markRows, popcount, tokenNeedle, tokensContaining, type TokenIndex } from '../../storage/indexes/token-index.js';

interface TokenLeaf {
  readonly column: number;
  readonly needle: string;
}

/** The filter as token leaves (all required), or null when it is anything else. */
export function tokenLeaves(e: Expr | null): TokenLeaf[] | null {
  if (e === null) return null;
  if ('and' in e) {
    const out: TokenLeaf[] = [];
    for (const x of e.and) {
      const l = tokenLeaves(x);
      if (l === null) return null;
      out.push(...l);
    }
    return out.length > 0 ? out : null;
  }
  if (!('leaf' in e)) return null;
  const l = e.leaf;
  if (l.kind !== 'text' || l.op !== 'contains' || l.caseSensitive || typeof l.value !== 'string') return null;
  const column = (TEXT_COLUMNS as readonly string[]).indexOf(l.column.id);
  const needle = tokenNeedle(l.value);
  return column < 0 || needle === null || l.column.sql !== `r.${l.column.id}` ? null : [{ column, needle }];
}

/** Rows of a segment matching every leaf, as a bitmap over its file row numbers. */
function matchingRows(ix: TokenIndex, leaves: readonly TokenLeaf[]): Uint32Array {
  let acc: Uint32Array | null = null;
  for (const l of leaves) {
    const col = ix.column(l.column)!;
    const bits = new Uint32Array(Math.ceil(ix.rows / 32));
    markRows(ix, col, tokensContaining(col, l.needle), bits);
    if (acc === null) acc = bits;
    else for (let i = 0; i < acc.length; i++) acc[i]! &= bits[i]!;
  }
  return acc!;
}

/**
 * The count of `plan` over `scope` with the token index's help, or null when the filter is not made
 * of token leaves or no segment in scope has a token index (then the caller counts as usual).
 */
export async function countByTokens(db: SqlRunner, snap: Snapshot, scope: Scope, plan: PlanInput, steps: string[]): Promise<number | null> {
  const leaves = tokenLeaves(plan.filter);
  if (leaves === null) return null;
  const indexed: { seg: SegmentEntry; ix: TokenIndex }[] = [];
  for (const seg of snap.segmentsFor(scope)) {
    const ix = tokenIndexOf(snap.path(seg), seg.rows);
    // A column found damaged when first read leaves its segment to the plain count.
    if (ix !== null && leaves.every((l) => ix.column(l.column) !== null)) indexed.push({ seg, ix });
  }
  if (indexed.length === 0) return null;
  const deadFree = snap.deadFreeFiles();
  const cut = snap.cutoffs(scope.projectId, scope.runId);
  let n = 0;
  let checked = 0;
  const expiringOf = (seg: SegmentEntry) => cut.has(seg.run_id) && seg.min_created_us < cut.get(seg.run_id)!;
  // Dead rows of segments retention leaves whole: their places in the file (dead-row lists), so their
  // count needs no read of the segment.
  const dirty = indexed.filter(({ seg }) => !deadFree.has(seg.file) && !expiringOf(seg)).map(({ seg }) => seg);
  const deadRows = dirty.length > 0 ? await snap.deadFileRows(dirty) : new Map<string, readonly number[]>();
  for (const { seg, ix } of indexed) {
    const expiring = expiringOf(seg);
    if (leaves.length === 1 && deadFree.has(seg.file) && !expiring) {
      // One leaf: tokens containing the needle rarely share rows, but they may; one token needs no union.
      const col = ix.column(leaves[0]!.column)!;
      const tokens = tokensContaining(col, leaves[0]!.needle);
      if (tokens.length <= 1) {
        n += tokens.length === 0 ? 0 : col.counts[tokens[0]!]!;
        continue;
      }
    }
    const bits = matchingRows(ix, leaves);
    if (!expiring) {
      n += popcount(bits) - countSet(bits, deadRows.get(seg.file) ?? []);
      continue;
    }
    const rows = rowsOf(bits);
    if (rows.length === 0) continue;
    checked++;
    // Partly expired: the rows still kept, read.
    const q = sql`SELECT count(*) AS n FROM read_parquet(${snap.path(seg)}, hive_partitioning = false)
      WHERE file_row_number IN (SELECT unnest(${rows}::BIGINT[])) AND seq NOT IN ${snap.deadSeqs}
        AND created_at >= make_timestamp(${cut.get(seg.run_id)!})`;
    n += Number((await db.all(q))[0]!['n']);
  }
  const rest: PlanInput = {
    ...plan,
    base: (metrics, text, created) =>
      snap.source(scope, metrics, text, created, { files: new Set(indexed.map((x) => x.seg.file)), only: false, memory: true }),
  };
  const q = countQuery(rest);
  n += Number((await db.all(q.sql))[0]!['n']);
  steps.push(`count (token index: ${indexed.length} segments, ${checked} read for expired rows)`);
  return n;
}
