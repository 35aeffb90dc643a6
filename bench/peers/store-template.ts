// A settled tracelake store built once and copied for each run (`--data-dir`): at 10M spans the
// library load takes tens of minutes on a small machine, and both library peers (tracelake, duckdb-raw)
// load the same set the same way, so building it once lets the questions be asked many times
// (old and new code in turn). The template is never queried itself: every peer gets a copy, since
// the delete question changes the data. `built.json` beside the store says what it holds; a template
// of another size or seed is refused, not silently reused.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';
import { spanBatches } from '../workload.js';
import { BENCH_STORE, LibraryLoad } from './library-load.js';

export interface TemplateInfo {
  /** The size asked for. */
  spans: number;
  /** Spans the generator gave for it (batches end at trace boundaries; absent in early templates). */
  loaded?: number;
  seed: number;
  batchSpans: number;
  /** sha256 of the loaded span ids in load order (the harness's fingerprint), first 16 hex digits. */
  fingerprint: string;
  projectId: string;
  logStreamId: string;
  loadSeconds: number;
  builtAt: string;
  /**
   * Options every copy is opened with (TraceStore.open). A derived store (bench/build-100m.ts) sets
   * autoCompact: false: its import segments are ones the merge policy would merge, in the background,
   * under the questions.
   */
  open?: { autoCompact?: boolean };
}

const infoFile = (dataDir: string) => join(dataDir, 'built.json');

/** The template in `dataDir` for this set, building it first when absent. */
export async function ensureTemplate(
  dataDir: string,
  spans: number,
  seed: number,
  batchSpans: number,
  log: (s: string) => void,
): Promise<TemplateInfo> {
  if (existsSync(infoFile(dataDir))) {
    const info = JSON.parse(readFileSync(infoFile(dataDir), 'utf8')) as TemplateInfo;
    if (info.spans !== spans || info.seed !== seed || info.batchSpans !== batchSpans) {
      throw new Error(
        `${dataDir} holds ${info.spans} spans of seed ${info.seed} (batches of ${info.batchSpans}), not ${spans}/${seed}/${batchSpans}: use another --data-dir`,
      );
    }
    return info;
  }
  if (existsSync(join(dataDir, 'tracelake')))
    throw new Error(`${dataDir}/tracelake exists without built.json (an interrupted build?): remove it first`);
  mkdirSync(dataDir, { recursive: true });
  const load = await LibraryLoad.open(dataDir);
  const hash = createHash('sha256');
  const t = performance.now();
  let n = 0;
  try {
    for (const batch of spanBatches({ spans, seed, batchSpans })) {
      for (const r of batch.rows) hash.update(r.id);
      await load.insert(batch);
      n += batch.rows.length;
      if (n % 500_000 < batchSpans) log(`template: ${n} spans, ${((performance.now() - t) / 1000).toFixed(0)} s`);
    }
    await load.settle();
  } finally {
    await load.store.close();
  }
  const info: TemplateInfo = {
    spans,
    loaded: n,
    seed,
    batchSpans,
    fingerprint: hash.digest('hex').slice(0, 16),
    projectId: load.projectId,
    logStreamId: load.logStreamId,
    loadSeconds: (performance.now() - t) / 1000,
    builtAt: new Date().toISOString(),
  };
  writeFileSync(infoFile(dataDir), `${JSON.stringify(info, null, 2)}\n`);
  log(`template: ${n} spans built in ${info.loadSeconds.toFixed(0)} s (generation included) in ${dataDir}`);
  return info;
}

/** Files a store writes once and never changes (segments, their id and text indexes): shared, not copied. */
const IMMUTABLE = /\.(parquet|ids|tix|tok|kids|vix)$/;

/**
 * Copies a store folder: segment files are hard links (a store never writes one in place: merges and
 * deletes write new files and unlink old ones, and index files are replaced by rename), everything
 * else (manifest, catalog log, write-ahead log, lock) is copied. At 100M spans a byte copy is ~30 GB
 * and minutes per peer; this is seconds. Falls back to copying across file systems.
 */
export function copyStore(from: string, to: string): { linked: number; copied: number } {
  const n = { linked: 0, copied: 0 };
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const a = join(from, e.name);
    const b = join(to, e.name);
    if (e.isDirectory()) {
      const sub = copyStore(a, b);
      n.linked += sub.linked;
      n.copied += sub.copied;
    } else if (IMMUTABLE.test(e.name)) {
      try {
        linkSync(a, b);
        n.linked++;
      } catch (err) {
        if (!['EXDEV', 'EPERM', 'EMLINK'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
        copyFileSync(a, b);
        n.copied++;
      }
    } else {
      copyFileSync(a, b);
      n.copied++;
    }
  }
  return n;
}

/** Copies the template's store into `<parent>/tracelake` (copyStore) and opens it as a LibraryLoad would. */
export async function openCopy(dataDir: string, info: TemplateInfo, parent: string): Promise<LibraryLoad> {
  const dir = join(parent, 'tracelake');
  copyStore(join(dataDir, 'tracelake'), dir);
  return LibraryLoad.adopt(
    dir,
    await TraceStore.open(dir, { ...BENCH_STORE, ...(info.open ?? {}) }),
    info.projectId,
    info.logStreamId,
    info.open?.autoCompact !== false,
  );
}

// Run alone to build a template ahead of a benchmark:
//   node --import tsx bench/peers/store-template.ts /work/data-10m 10m
if (import.meta.url === `file://${process.argv[1]}`) {
  const { parseSize } = await import('../common.js');
  const { DEFAULT_SEED } = await import('../workload.js');
  const [dir, size] = process.argv.slice(2);
  if (!dir || !size) throw new Error('usage: store-template.ts <data-dir> <size>');
  const info = await ensureTemplate(dir, parseSize(size), DEFAULT_SEED, 5000, (s) => process.stderr.write(`${s}\n`));
  process.stdout.write(`${JSON.stringify(info)}\n`);
}
