// Opening after a restart: every log file not yet sealed becomes a frozen memory table again, holding
// exactly its whole requests (rows, tombstones, has_children overrides), and the in-memory notes
// (recent ids, partitions, dead and childless sets, next sequence number) are rebuilt from it. The
// sealer takes the tables from there.
import type { RecordBatch } from 'apache-arrow';
import { noteAwaits, resolveAwaits } from '../memtable/awaited.js';
import { MemTable } from '../memtable/mem-tables.js';
import { kindOf, type RecordKind } from '../../record/record-columns.js';
import { memKey, type MemEntry, type StoreState } from '../store-state.js';
import { readWalFile, type WalFile } from './wal.js';

export async function replayLog(s: StoreState, files: readonly WalFile[]): Promise<void> {
  for (const file of files) {
    const { entries, firstSeq } = readWalFile(file.path);
    const table = new MemTable(file.number, firstSeq, s.inserter.create(`mem_${file.number}`));
    table.frozen = true;
    s.mem.push(table);
    const inserts: Promise<void>[] = [];
    for (const e of entries) {
      s.nextSeq = Math.max(s.nextSeq, e.lastSeq + 1);
      s.dead.addAll(e.dead);
      for (const q of e.dead) table.dead.push(q); // a spread of a large delete overflows the stack
      for (const q of e.childless) s.childless.add(q);
      for (const q of e.childless) table.childless.push(q);
      if (e.batch) {
        const rows = linkColumns(e.batch);
        for (const r of rows) s.memIds.set(memKey(r.run_id, r.id), { ...r, table: file.number });
        table.noteRows(rows[0]!.project_id, rows[0]!.run_id, rows, metricNames(e.batch, rows), 0, null);
        // The same order as when they were logged: parents arriving first, then what the rows await.
        if (s.awaited.size > 0)
          resolveAwaits(
            s,
            table,
            rows.map((r) => memKey(r.run_id, r.id)).filter((k) => s.awaited.has(k)),
          );
        if (e.awaits.length > 0) noteAwaits(s, table, rows[0]!.project_id, rows[0]!.run_id, e.awaits);
      }
      inserts.push(s.inserter.insert(table, e.batch, e.dead, e.childless));
    }
    await Promise.all(inserts);
  }
  // A row the manifest marks dead (a bulk load replaced it) is no record's latest version.
  // A row marked childless after it was logged (a delete took its last child) reads has_children false.
  for (const [key, e] of s.memIds) {
    if (s.dead.has(e.seq)) s.memIds.delete(key);
    else if (e.has_children && s.childless.has(e.seq)) s.memIds.set(key, { ...e, has_children: false });
  }
}

export type LinkRow = Omit<MemEntry, 'table'> & { id: string; run_id: string };

/** The link columns of a logged batch, as rows. */
export function linkColumns(batch: RecordBatch): LinkRow[] {
  const col = (n: string) => batch.getChild(n)!;
  const seq = col('seq');
  const id = col('id');
  const type = col('type');
  const project = col('project_id');
  const run = col('run_id');
  const trace = col('trace_id');
  const session = col('session_id');
  const children = col('has_children');
  const out: LinkRow[] = [];
  for (let i = 0; i < batch.numRows; i++) {
    out.push({
      seq: Number(seq.get(i)),
      id: String(id.get(i)),
      type: String(type.get(i)),
      project_id: String(project.get(i)),
      run_id: String(run.get(i)),
      trace_id: (trace.get(i) as string | null) ?? null,
      session_id: (session.get(i) as string | null) ?? null,
      has_children: children.get(i) === true,
    });
  }
  return out;
}

/** Metric names by record kind of a logged batch. */
export function metricNames(batch: RecordBatch, rows: readonly { type: string }[]): Map<RecordKind, Set<string>> {
  const out = new Map<RecordKind, Set<string>>();
  const metrics = batch.getChild('metrics')!;
  rows.forEach((r, i) => {
    const m = metrics.get(i) as { toJSON(): Record<string, number> } | null;
    if (!m) return;
    const kind = kindOf(r.type);
    let names = out.get(kind);
    if (!names) out.set(kind, (names = new Set()));
    for (const k of Object.keys(m.toJSON())) names.add(k);
  });
  return out;
}
