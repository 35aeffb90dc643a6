// Bulk load: rows that are already flat (an export read by DuckDB) go straight into segments, in the
// layout the sealer writes (record columns, shredded metric columns, sorted by created_at then id, ZSTD,
// the store's row-group size), one segment per kind, without the log or the memory tables. A batch is
// one commit: its files are written and fsynced first, then one manifest write lists them and marks
// dead the versions they replace, so a crash keeps the whole batch or none of it (unlisted files are
// removed on open). The batch's sequence numbers are reserved when it starts: a record logged later
// wins over it, one logged earlier (sealed or in memory) is replaced by it, exactly as appends do.
import { join } from 'node:path';
import type { Database, Param } from '../db/database.js';
import { StorageError } from '../errors.js';
import { hasHash, idHash } from './id-index.js';
import { partitionKey, type ManifestState } from './manifest.js';
import { KIND_SQL, RECORD_COLUMNS, type RecordKind } from './record-columns.js';
import { removeSegmentFiles, segmentPath, writeSegment, type WrittenSegment } from './segments.js';
import type { StoreState } from './store-state.js';

export interface BulkBatch {
  /** The DuckDB instance that reads the source and writes the files (the importer's own). */
  readonly db: Database;
  /**
   * A SELECT giving the batch's rows: every record column but `seq`, `project_id` and `run_id`, typed as
   * in RECORD_COLUMNS, plus `rn`, the row's position in the batch from 0 (of two rows with one id the
   * later wins). Built from the column registry; user values only as its parameters.
   */
  readonly select: string;
  readonly params: readonly Param[];
  /** Rows `select` gives (that many sequence numbers are reserved). */
  readonly rows: number;
}

const KINDS: readonly RecordKind[] = ['span', 'trace', 'session'];

/** Writes one batch into the run as segments and commits it; returns the records it added. */
export async function bulkLoad(s: StoreState, projectId: string, runId: string, batch: BulkBatch): Promise<number> {
  if (batch.rows === 0) return 0;
  return s.maint.run(async () => {
    if (s.closed) throw new StorageError('record store is closed');
    // Reserved in one synchronous step, like an append's: later appends get higher numbers.
    const base = s.nextSeq;
    s.nextSeq += batch.rows;
    const n = batch.params.length;
    const p = (i: number) => `$${n + i}`;
    let src = `(${batch.select})`;
    const dup = (await batch.db.all(`SELECT count(*) - count(DISTINCT id) AS d FROM ${src}`, batch.params))[0]!;
    // The same id twice in the file: only its last row is written (the others would be dead on arrival).
    if (Number(dup['d']) > 0) src = `(SELECT * FROM ${src} QUALIFY rn = max(rn) OVER (PARTITION BY id))`;

    const metricIds: Record<string, number> = { ...s.manifest.metric_ids };
    let nextMetric = Math.max(-1, ...Object.values(metricIds)) + 1;
    const names = new Map<RecordKind, string[]>(KINDS.map((k) => [k, []]));
    for (const r of await batch.db.all(`SELECT DISTINCT ${KIND_SQL} AS kind, unnest(map_keys(metrics)) AS name FROM ${src} ORDER BY name`, batch.params)) {
      names.get(r['kind'] as RecordKind)!.push(String(r['name']));
    }
    const hashes = new Map<RecordKind, number[]>(KINDS.map((k) => [k, []]));
    for await (const { chunk } of batch.db.stream(`SELECT ${KIND_SQL} AS kind, id FROM ${src}`, batch.params)) {
      if (!chunk) break;
      const [kinds, ids] = chunk.getColumns() as [string[], string[]];
      for (let i = 0; i < chunk.rowCount; i++) hashes.get(kinds[i] as RecordKind)!.push(idHash(ids[i]!));
    }

    const added: WrittenSegment[] = [];
    try {
      for (const kind of KINDS) {
        const kindHashes = hashes.get(kind)!;
        if (kindHashes.length === 0) continue;
        const metrics = names.get(kind)!;
        for (const m of metrics) if (metricIds[m] === undefined) metricIds[m] = nextMetric++;
        const shredded = metrics.map((m, i) => `, metrics[${p(5 + i)}] AS m${metricIds[m]}`).join('');
        const cols = RECORD_COLUMNS.map((c) => (c.name === 'seq' ? `(${p(1)} + rn)::BIGINT AS seq` : c.name === 'project_id' ? `${p(2)}::VARCHAR AS project_id` : c.name === 'run_id' ? `${p(3)}::VARCHAR AS run_id` : c.name));
        const written = await batch.db.withConnection((conn) =>
          writeSegment(conn, s.dir, {
            file: segmentPath(s.dir, partitionKey(projectId, runId, kind), s.nextSegment++),
            projectId,
            runId,
            kind,
            select: `SELECT ${cols.join(', ')}${shredded} FROM ${src} WHERE ${KIND_SQL} = ${p(4)} ORDER BY created_at, id`,
            params: [...batch.params, base, projectId, runId, kind, ...metrics],
            rowGroupSize: s.options.rowGroupSize,
            textIndex: s.options.textIndex,
            metrics: metrics.map((m) => metricIds[m]!),
            hashes: Float64Array.from(kindHashes),
          }),
        );
        if (written) added.push(written);
      }
      return await commitBatch(s, projectId, runId, added, metricIds);
    } catch (err) {
      for (const seg of added) if (!s.manifest.segments.some((g) => g.file === seg.entry.file)) removeSegmentFiles(s.dir, seg.entry.file);
      throw err instanceof StorageError ? err : new StorageError(`importing into segments failed: ${(err as Error).message}`, { cause: err });
    }
  });
}

/**
 * Marks dead whichever of two live versions of an id is older (the batch's rows against the run's
 * segments and memory tables), then lists the new files in one manifest write.
 */
async function commitBatch(s: StoreState, projectId: string, runId: string, added: readonly WrittenSegment[], metricIds: Record<string, number>): Promise<number> {
  if (added.length === 0) return 0;
  const newFiles = added.map((a) => join(s.dir, a.entry.file));
  const dead: number[] = [];
  const existing = s.manifest.segments.filter((g) => g.project_id === projectId && g.run_id === runId).map((g) => join(s.dir, g.file));
  if (existing.length > 0) {
    const pairs = await s.conns.seal.all(
      `SELECT e.seq AS old, i.seq AS new FROM read_parquet($1, hive_partitioning = false) e JOIN read_parquet($2, hive_partitioning = false) i ON e.id = i.id
       WHERE e.seq NOT IN (SELECT seq FROM dead)`,
      [existing, newFiles],
    );
    for (const r of pairs) dead.push(Math.min(Number(r['old']), Number(r['new'])));
  }
  // Records in memory tables: appends go on meanwhile, so look until no new candidate turned up, then
  // commit in the same synchronous step as the last look (an append after it sees the new segments).
  const all = [...added.map((a) => a.hashes)];
  const inBatch = (id: string) => {
    const h = idHash(id);
    return all.some((hs) => hasHash(hs, h));
  };
  const looked = new Map<string, number>();
  /** Memory entries the batch replaces: key -> the seq that dies (a later append may have replaced it since). */
  const memDead = new Map<string, number>();
  let pending = dead;
  for (;;) {
    if (pending.length > 0) {
      // Marked before listed, effective from the commit's generation: a snapshot of the manifest before
      // it still sees the replaced versions, one after it the new ones (maint is held: no other commit).
      await s.inserter.run('INSERT INTO dead (seq, gen) SELECT unnest($1::BIGINT[]), $2', [pending, s.manifest.generation + 1]);
      pending = [];
    }
    const todo: { key: string; id: string; seq: number }[] = [];
    const prefix = `${runId}/`;
    for (const [key, e] of s.memIds) {
      if (!key.startsWith(prefix) || looked.get(key) === e.seq) continue;
      const id = key.slice(prefix.length);
      if (inBatch(id)) todo.push({ key, id, seq: e.seq });
    }
    if (todo.length === 0) break;
    const found = new Map((await s.conns.seal.all('SELECT id, seq FROM read_parquet($1, hive_partitioning = false) WHERE id IN (SELECT unnest($2::VARCHAR[]))', [newFiles, todo.map((t) => t.id)])).map((r) => [String(r['id']), Number(r['seq'])]));
    for (const t of todo) {
      looked.set(t.key, t.seq);
      const mine = found.get(t.id);
      if (mine === undefined) continue;
      if (t.seq < mine) memDead.set(t.key, t.seq);
      pending.push(Math.min(t.seq, mine));
      dead.push(Math.min(t.seq, mine));
    }
  }
  const state: ManifestState = {
    ...s.manifest,
    generation: s.manifest.generation + 1,
    next_segment: s.nextSegment,
    segments: [...s.manifest.segments, ...added.map((a) => a.entry)],
    dead: [...s.manifest.dead, ...dead],
    metric_ids: metricIds,
  };
  try {
    s.commit(state, added.map((a) => a.entry.file));
  } catch (err) {
    if (dead.length > 0) await s.inserter.run('DELETE FROM dead WHERE seq IN (SELECT unnest($1::BIGINT[]))', [dead]).catch(() => undefined);
    throw err;
  }
  for (const q of dead) s.dead.add(q);
  for (const [key, seq] of memDead) if (s.memIds.get(key)?.seq === seq) s.memIds.delete(key);
  for (const { entry, hashes } of added) s.index.add({ key: entry.file, partition: entry.file, hashes });
  // Appends that looked up sealed versions before this commit look again (they may replace these rows).
  s.sealGeneration += 1;
  return added.reduce((n, a) => n + a.entry.rows, 0);
}
