// Segments whose side indexes a writable store has not checked since it opened (segments/index-repair.ts
// checks and rebuilds them after the open, in the background). Until then readers treat the file as
// absent: a file left by an older version, another DuckDB or a crash may be missing, stale or damaged,
// and these readers would trust it (the child index's hashes, the token index's postings, whose whole
// checksum only the check reads). The text index's trigram sets need no entry: each load checks its
// checksum and row groups. Kept per process by absolute segment path: the writer holds its folder's lock,
// so no two stores in one process repair the same segment.

const unchecked = {
  /** The child index and its row file (child-index.ts). */
  child: new Set<string>(),
  /** The token index (token-index.ts). */
  tokens: new Set<string>(),
};

export type CheckedIndex = keyof typeof unchecked;

/** Readers leave `kind` of the segment at `abs` alone until `markChecked`. */
export function markUnchecked(kind: CheckedIndex, abs: string): void {
  unchecked[kind].add(abs);
}

/** The index was found usable or rebuilt (or the segment left the store, or its store closed). */
export function markChecked(kind: CheckedIndex, abs: string): void {
  unchecked[kind].delete(abs);
}

/** Whether readers may use `kind` of the segment at `abs` (when its file exists and is whole). */
export function indexChecked(kind: CheckedIndex, abs: string): boolean {
  return !unchecked[kind].has(abs);
}
