// A snapshot's time profile (row groups the text index leaves, memory tables) for page windows, apart from its SQL sources.
import { join } from 'node:path';
import type { SegmentEntry } from '../manifest/manifest.js';
import type { MemTable } from '../memtable/mem-tables.js';
import type { Scope } from './scope.js';
import { candidateGroups, textIndexOf, textNeeds, type TextRequirement } from '../indexes/text-index.js';

/** See textCandidates. */
export interface TextCandidates {
  whole: SegmentEntry[];
  partial: { seg: SegmentEntry; groups: number[]; ranges: [number, number][] }[];
}

/** See timeProfile. */
export interface TimeProfile {
  rowGroups: (readonly [number, number, number])[];
  memRows: number;
  memGroups: (readonly [number, number, number])[] | null;
}

/**
 * Segments to read whole, and those the text index narrows to some row groups (as inclusive
 * file_row_number ranges). Segments none of whose row groups can match are left out.
 */
export function textCandidates(dir: string, segments: readonly SegmentEntry[], text: readonly TextRequirement[]): TextCandidates {
  const needs = textNeeds(text);
  if (needs.length === 0) return { whole: [...segments], partial: [] };
  const whole: SegmentEntry[] = [];
  const partial: TextCandidates['partial'] = [];
  for (const seg of segments) {
    const rows = seg.row_groups.map((g) => g[2]);
    const ix = textIndexOf(join(dir, seg.file), rows);
    const groups = ix ? candidateGroups(ix, needs) : null;
    // Reading a file by row ranges costs a little per row: it pays only when most rows go.
    const kept = groups?.reduce((n, g) => n + rows[g]!, 0) ?? seg.rows;
    if (groups === null || (groups.length > 0 && kept * 2 > seg.rows)) {
      whole.push(seg);
      continue;
    }
    if (groups.length === 0) continue;
    const starts: number[] = [];
    let at = 0;
    for (const n of rows) {
      starts.push(at);
      at += n;
    }
    const ranges: [number, number][] = [];
    for (const g of groups) {
      const a = starts[g]!;
      const b = a + rows[g]! - 1;
      const last = ranges[ranges.length - 1];
      if (last && last[1] + 1 === a) last[1] = b;
      else ranges.push([a, b]);
    }
    partial.push({ seg, groups, ranges });
  }
  return { whole, partial };
}

/**
 * Row groups (and rows in memory) of a scope, for choosing a created_at window: only those a read
 * with these text requirements would not skip, so the first window already holds enough of them.
 */
export function timeProfile(
  dir: string,
  mem: readonly MemTable[],
  segments: readonly SegmentEntry[],
  scope: Scope,
  text: readonly TextRequirement[],
): TimeProfile {
  let memRows = 0;
  // Each memory table's created_at range and rows, like a row group's (null: some table's range is unknown).
  let memGroups: (readonly [number, number, number])[] | null = [];
  for (const t of mem) {
    memRows += t.rows;
    const r = t.createdRange(scope.projectId, scope.runId, scope.kinds);
    if (r === null) memGroups = null;
    else if (memGroups !== null && r[0] <= r[1]) memGroups.push([r[0], r[1], t.rows]);
  }
  const { whole, partial } = textCandidates(dir, segments, text);
  return {
    rowGroups: [...whole.flatMap((s) => s.row_groups), ...partial.flatMap((p) => p.groups.map((g) => p.seg.row_groups[g]!))],
    memRows,
    memGroups,
  };
}
