// The compactor: picks merges by the policies of compaction.ts, writes them on a connection of its
// own (merge.ts), and commits each under the manifest lock, unless the partition changed meanwhile.
// Replaced files and the dead seqs they held go once no reader may still use them.
import { join } from 'node:path';
import { StorageError } from '../../errors.js';
import { DEFAULT_POLICY, MERGE_FANIN, PAUSE_MERGE_RATIO, pickDead, pickMerge, pickTiered } from './compaction.js';
import { partitionRows, type ManifestState, type SegmentEntry } from '../manifest/manifest.js';
import { writeMerge } from './merge.js';
import { idHash } from '../indexes/id-index.js';
import { indexedSegment, readHashes, removeSegmentFiles } from './segments.js';
import { listsFrom, type StoreState } from '../store-state.js';
import { sql } from '../../query/sql.js';
import type { Row } from '../../db/database.js';

export class Compactor {
  readonly #s: StoreState;
  #running: Promise<number> | null = null;

  constructor(state: StoreState) {
    this.#s = state;
  }

  /**
   * Runs compaction in the background (after seals and large deletes). Not on the store's cleanup
   * chain: a merge takes seconds, and sealed tables waiting there to be dropped would hold their
   * memory all that time.
   */
  schedule(): void {
    if (this.#running || this.#s.closed) return;
    void this.run(true).catch((err: unknown) => {
      // A close stops a merge under way (its inputs stay listed): nothing failed.
      if (!this.#s.closed) process.emitWarning(`tracelake: background compaction failed: ${(err as Error).message}`);
    });
  }

  /**
   * Merges small segments and rewrites mostly-dead ones until the policy is satisfied; returns merges
   * done. In the background each round first waits for a pause in appends (mergePauseMs, at most
   * mergeMaxDelayMs): while rows pour in, a merge's CPU would come out of the writes and the reads.
   * A round that found no pause merges by size tiers, one merge per partition (compaction.ts).
   */
  run(background = false): Promise<number> {
    if (this.#running) return this.#running;
    this.#running = (async () => {
      let merges = 0;
      for (;;) {
        const busy = background && !(await this.#s.quiet('appends'));
        const policy = this.#s.options.compaction;
        const groups = busy ? pickTiered(this.#s.manifest.segments, policy) : [];
        if (groups.length === 0) {
          // Counted only when a pick uses them: it reads the seq column of every segment.
          const dead = await this.#deadCounts();
          const segments = this.#s.manifest.segments;
          const deadIn = (g: SegmentEntry) => dead.get(g.file) ?? 0;
          const ratio = background ? PAUSE_MERGE_RATIO : MERGE_FANIN;
          const one =
            (busy ? pickDead(segments, deadIn, policy) : pickMerge(segments, deadIn, policy, ratio)) ?? (await this.#mostOverridden());
          if (one) groups.push(one);
        }
        if (groups.length === 0 || this.#s.closed) return merges;
        // Taken in the same step as the pick: a drop committed after it leaves these files to us.
        const releases = groups.map((group) => this.#s.use(group.map((g) => g.file)));
        try {
          for (const group of groups) {
            if (this.#s.closed) return merges;
            try {
              await this.#merge(group);
            } catch (err) {
              // The inputs stay listed and untouched: nothing changed but a leftover file, removed on open.
              throw err instanceof StorageError ? err : new StorageError('merging segments failed', { cause: err });
            }
            merges++;
          }
        } finally {
          for (const release of releases) release();
        }
      }
    })().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  /** Merges each segment holding has_children overrides on its own (after any merge under way). */
  async foldOverrides(): Promise<number> {
    // Nothing to fold: no need to wait for a merge under way (it may take seconds).
    if (this.#s.manifest.childless.length === 0) return 0;
    while (this.#running) await this.idle();
    const run = (async () => {
      const s = this.#s;
      let merges = 0;
      if (s.manifest.childless.length === 0 || s.manifest.segments.length === 0) return 0;
      const byPath = new Map(s.manifest.segments.map((g) => [join(s.dir, g.file), g]));
      const release = s.use(s.manifest.segments.map((g) => g.file));
      try {
        const rows = await s.conns.merge.all(
          sql`SELECT DISTINCT filename AS f FROM read_parquet(${[...byPath.keys()]}, hive_partitioning = false, filename = true)
              WHERE seq IN (SELECT unnest(${[...s.manifest.childless]}::BIGINT[]))`,
        );
        for (const r of rows) {
          const g = byPath.get(String(r['f']));
          if (!g || this.#s.closed) continue;
          await this.#merge([g]);
          merges++;
        }
      } finally {
        release();
      }
      return merges;
    })().finally(() => {
      this.#running = null;
    });
    this.#running = run;
    return run;
  }

  async idle(): Promise<void> {
    if (this.#running) await this.#running.catch(() => undefined);
  }

  /**
   * Dead rows a merge could purge, per segment file, counted exactly (ranges of seqs overlap between
   * files). Only tombstones in the manifest count (see MergeContext.purgeable): one only in the log
   * waits for the seal of its log file, else a mostly-dead file would be picked again and again.
   */
  async #deadCounts(): Promise<Map<string, number>> {
    const s = this.#s;
    const out = new Map<string, number>();
    const durable = new Set(s.manifest.dead);
    await this.#addExpired(out);
    if (durable.size === 0 || s.manifest.segments.length === 0) return out;
    const byPath = new Map(s.manifest.segments.map((g) => [join(s.dir, g.file), g.file]));
    const release = s.use([...byPath.values()]);
    let rows: Row[];
    try {
      rows = await s.conns.merge.all(
        sql`SELECT filename AS f, count(*) AS n FROM read_parquet(${[...byPath.keys()]}, hive_partitioning = false, filename = true)
         WHERE seq IN (SELECT unnest(${[...durable]}::BIGINT[])) GROUP BY filename`,
      );
    } finally {
      release();
    }
    for (const r of rows) {
      const rel = byPath.get(String(r['f']));
      if (rel) out.set(rel, Number(r['n']));
    }
    return out;
  }

  /**
   * The segment holding the most has_children overrides, when the manifest holds more than the policy
   * allows (they stay there until a merge rewrites their segment, and big segments rarely merge).
   */
  async #mostOverridden(): Promise<SegmentEntry[] | null> {
    const s = this.#s;
    const childless = s.manifest.childless;
    if (childless.length <= (s.options.compaction.maxChildless ?? DEFAULT_POLICY.maxChildless!) || s.manifest.segments.length === 0)
      return null;
    const byPath = new Map(s.manifest.segments.map((g) => [join(s.dir, g.file), g]));
    const release = s.use(s.manifest.segments.map((g) => g.file));
    try {
      const [top] = await s.conns.merge.all(
        sql`SELECT filename AS f, count(*) AS n FROM read_parquet(${[...byPath.keys()]}, hive_partitioning = false, filename = true)
         WHERE seq IN (SELECT unnest(${[...childless]}::BIGINT[])) GROUP BY filename ORDER BY n DESC, f LIMIT 1`,
      );
      const g = top ? byPath.get(String(top['f'])) : undefined;
      return g ? [g] : null;
    } finally {
      release();
    }
  }

  /** The retention cutoff (epoch µs) of a segment's run, if its records expire. */
  #cutoff(g: SegmentEntry): number | undefined {
    return this.#s.retention?.cutoffs(g.project_id).get(g.run_id);
  }

  /**
   * Expired rows (retention) count as dead for picking merges, so a merge after a seal also takes them
   * off the disk: all rows of a segment past the cutoff, else counted in the file when it straddles it.
   */
  async #addExpired(out: Map<string, number>): Promise<void> {
    const s = this.#s;
    for (const g of s.manifest.segments) {
      const cut = this.#cutoff(g);
      if (cut === undefined || g.min_created_us >= cut) continue;
      let n = g.rows;
      if (g.max_created_us >= cut) {
        const r = await s.conns.merge.all(
          sql`SELECT count(*) AS n FROM read_parquet(${join(s.dir, g.file)}, hive_partitioning = false) WHERE created_at < make_timestamp(${cut})`,
        );
        n = Number(r[0]!['n']);
      }
      out.set(g.file, Math.min(g.rows, (out.get(g.file) ?? 0) + n));
    }
  }

  async #merge(group: readonly SegmentEntry[]): Promise<void> {
    const s = this.#s;
    // Tombstones in the manifest now stay there until this merge commits (merges run one at a time;
    // a drop that removes some also removes their files, and this merge is then stale).
    const durable = new Set(s.manifest.dead);
    const out = await writeMerge(
      {
        dir: s.dir,
        conn: s.conns.merge,
        writeConn: s.conns.mergeWrite,
        nextSegment: () => s.nextSegment++,
        rowGroupSize: s.options.rowGroupSize,
        textIndex: s.options.textIndex,
        topListMinRows: listsFrom(s.options),
        valueIndexMinRows: s.options.valueIndexMinRows,
        otherRows: partitionRows(s.manifest.segments, group[0]!, new Set(group.map((g) => g.file))),
        factColumns: s.options.notedColumns,
        compressionLevel: s.options.compactionLevel,
        hashesOf: (g) => readHashes(s.conns.merge, s.dir, g, idHash),
        purgeable: (q) => durable.has(q),
        childless: s.manifest.childless,
        ...(this.#cutoff(group[0]!) === undefined ? {} : { expiredBefore: this.#cutoff(group[0]!)! }),
      },
      group,
    );
    await s.maint.run(async () => {
      const live = new Set(s.manifest.segments.map((g) => g.file));
      if (!group.every((g) => live.has(g.file))) {
        // The partition was dropped (or merged) meanwhile: this output is stale.
        if (out.written) removeSegmentFiles(s.dir, out.written.entry.file);
        return;
      }
      const gone = new Set(group.map((g) => g.file));
      const purged = new Set(out.purged);
      const folded = new Set(out.folded);
      const state: ManifestState = {
        ...s.manifest,
        generation: s.manifest.generation + 1,
        next_segment: s.nextSegment,
        segments: [...s.manifest.segments.filter((g) => !gone.has(g.file)), ...(out.written ? [out.written.entry] : [])],
        dead: s.manifest.dead.filter((q) => !purged.has(q)),
        childless: s.manifest.childless.filter((q) => !folded.has(q)),
      };
      s.commit(state, out.written ? [out.written.entry.file] : []);
      for (const f of gone) s.index.remove(f);
      if (out.written) {
        s.index.add(indexedSegment(s.dir, out.written));
        s.tally('merge', out.written);
      }
      s.retire([...gone], out.purged, out.folded);
    });
  }
}
