// Expiry's removal step: after a commit, everything under the table that nothing kept names goes:
// manifests and lists of expired snapshots, data and delete files no kept snapshot names, metadata
// versions out of the log, and whatever an interrupted publish left.
import type { TableMetadata } from './metadata.js';
import type { Target } from './target.js';

/** Removes the listed files of `table` that `keep`, the kept snapshots and the metadata log do not name; returns how many. */
export async function removeUnnamed(
  target: Target,
  table: string,
  listed: Iterable<string>,
  meta: TableMetadata,
  keep: ReadonlySet<string>,
): Promise<number> {
  const keptSnaps = new Set(meta.snapshots.map((s) => String(s['snapshot-id'])));
  const keptMeta = new Set(meta['metadata-log'].map((e) => e['metadata-file']));
  const gone: string[] = [];
  for (const rel of listed) {
    if (keep.has(rel) || rel === `${table}/metadata/version-hint.text`) continue;
    const snap = /\/metadata\/snap-(\d+)-/.exec(rel);
    if (snap && keptSnaps.has(snap[1]!)) continue;
    if (rel.endsWith('.metadata.json') && keptMeta.has(target.uri(rel))) continue;
    gone.push(rel);
  }
  await target.remove(gone);
  return gone.length;
}
