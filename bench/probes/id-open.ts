// What opening the id index costs, without building a store: `write` lays out segments' `.ids` and
// `.idf` files as seals and merges leave them (ids `id-0` .. `id-<n-1>`, in segments of the given
// sizes, one run); `open` opens the index over them in a fresh process and reports wall time, RSS
// after open, the index's bytes, the cost per id of a lookup for new and for stored ids, and the time
// a bulk load's batch of new ids takes to find that it meets no segment.
// This build keeps one store-wide filter, saved as a checkpoint beside the segments: `--cold` removes
// the checkpoint first (the first open of a folder written without one), and the time until every
// segment is covered and the checkpoint saved is reported as cover_ms. `--base <checkout>` opens with
// that checkout's id index (its built dist/; per-segment filters, no store-wide one), `--old
// <checkout>` with the one before per-segment filters (reads every `.ids` file), so builds can take
// turns in one sitting.
//
//   node dist/bench/probes/id-open.js write /tmp/ids-10m --ids 10000000 --segment 2000000
//   node --expose-gc dist/bench/probes/id-open.js open /tmp/ids-10m [--cold | --base /work/main | --old /work/base] [--lookups 200000] [--bulk 1000000]
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { idFilterPath, readIdFences, readIdFilter, IdFilter, writeIdFilter } from '../../src/storage/indexes/id-filter.js';
import { CHECKPOINT } from '../../src/storage/indexes/store-id-filter.js';
import { idHash, SealedIdIndex } from '../../src/storage/indexes/id-index.js';
import { idsPath } from '../../src/storage/segments/segments.js';

const PART = 'records/project_id=p/run_id=r/kind=span';
const PREFIX = 'records/project_id=p/run_id=r/';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

function write(dir: string): void {
  const total = Number(arg('ids', '10000000'));
  const size = Number(arg('segment', '2000000'));
  mkdirSync(join(dir, PART), { recursive: true });
  let n = 0;
  for (let seg = 0; n < total; seg++) {
    const rows = Math.min(size, total - n);
    const hashes = new Float64Array(rows);
    for (let i = 0; i < rows; i++) hashes[i] = idHash(`id-${n + i}`);
    hashes.sort();
    const abs = join(dir, PART, `seg-${String(seg).padStart(9, '0')}.parquet`);
    writeFileSync(idsPath(abs), hashes);
    writeIdFilter(abs, IdFilter.of(hashes));
    n += rows;
  }
  console.log(JSON.stringify({ wrote: n, segments: Math.ceil(total / size) }));
}

interface Index {
  candidates(id: string, prefix: string): string[];
  mayHoldAny(keys: readonly string[], hashes: ArrayLike<number>): Set<string>;
  readonly bytes: number;
  readonly size: number;
}

async function openOld(root: string, dir: string, files: string[]): Promise<Index> {
  const mod = (await import(join(root, 'dist/src/storage/indexes/id-index.js'))) as {
    SealedIdIndex: new () => Index & { add(s: unknown, fill: boolean): void; refill(): void };
  };
  const index = new mod.SealedIdIndex();
  for (const f of files) {
    const buf = readFileSync(idsPath(join(dir, f)));
    const hashes = new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8);
    index.add({ key: f, partition: f, hashes }, false);
  }
  index.refill();
  return index;
}

/** The base checkout's index (per-segment filters searched in place), as its store open built it. */
async function openBase(root: string, dir: string, files: string[]): Promise<Index> {
  const idx = (await import(join(root, 'dist/src/storage/indexes/id-index.js'))) as {
    SealedIdIndex: new () => Index & { add(s: unknown): void };
  };
  const flt = (await import(join(root, 'dist/src/storage/indexes/id-filter.js'))) as {
    readIdFilter: (p: string) => { count: number } | null;
  };
  const index = new idx.SealedIdIndex();
  for (const f of files) {
    const abs = join(dir, f);
    const filter = flt.readIdFilter(abs);
    if (!filter || statSync(idsPath(abs)).size !== filter.count * 8) throw new Error(`${f}: no filter`);
    index.add({ key: f, partition: f, filter, ids: idsPath(abs) });
  }
  return index;
}

/** As a writable store's open: the checkpoint, then fences of covered segments and filters of the others. */
function openNew(dir: string, files: string[]): SealedIdIndex {
  const index = new SealedIdIndex();
  let total = 0;
  for (const f of files) total += statSync(idsPath(join(dir, f))).size / 8;
  index.useStoreFilter(dir, total);
  for (const f of files) {
    const abs = join(dir, f);
    const count = statSync(idsPath(abs)).size / 8;
    const filter = index.covers(f, count) ? readIdFences(abs) : readIdFilter(abs);
    if (!filter || count !== filter.count) throw new Error(`${f}: no filter`);
    index.add({ key: f, partition: f, filter, ids: idsPath(abs) });
  }
  return index;
}

function perId(index: Index, ids: readonly string[], expectHit: boolean): number {
  const t0 = performance.now();
  let hits = 0;
  for (const id of ids) hits += index.candidates(id, PREFIX).length > 0 ? 1 : 0;
  const us = ((performance.now() - t0) * 1000) / ids.length;
  if (expectHit ? hits !== ids.length : hits > ids.length * 0.001) throw new Error(`unexpected hits: ${hits} of ${ids.length}`);
  return us;
}

async function open(dir: string): Promise<void> {
  const old = arg('old', '');
  const base = arg('base', '');
  if (process.argv.includes('--cold')) rmSync(join(dir, CHECKPOINT), { force: true });
  const lookups = Number(arg('lookups', '200000'));
  const files = readdirSync(join(dir, PART))
    .filter((f) => f.endsWith('.ids'))
    .sort()
    .map((f) => join(PART, f.replace(/\.ids$/, '.parquet')));
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().rss;
  const t0 = performance.now();
  const index = old ? await openOld(old, dir, files) : base ? await openBase(base, dir, files) : openNew(dir, files);
  const openMs = performance.now() - t0;
  // The new index covers what its checkpoint missed in the background, then saves it: waited for here.
  let coverMs = 0;
  if (index instanceof SealedIdIndex) {
    await index.settled();
    coverMs = performance.now() - t0 - openMs;
  }
  gc?.();
  const after = process.memoryUsage().rss;
  let stored = 0;
  for (const f of files) stored += statSync(idsPath(join(dir, f))).size / 8;
  const newIds = Array.from({ length: lookups }, (_, i) => `new-${i}`);
  const existing = Array.from({ length: lookups }, (_, i) => `id-${Math.floor((((i * 2654435761) % 4294967296) / 4294967296) * stored)}`);
  // Once to warm the code and the page cache, then measured.
  perId(index, newIds.slice(0, 10_000), false);
  perId(index, existing.slice(0, 10_000), true);
  const newUs = perId(index, newIds, false);
  const existingUs = perId(index, existing, true);
  // A bulk load's batch of new ids (sorted hashes) against every segment of its run.
  const batch = Float64Array.from({ length: Number(arg('bulk', '1000000')) }, (_, i) => idHash(`bulk-${i}`)).sort();
  const t1 = performance.now();
  const met = index.mayHoldAny(files, batch).size;
  const bulkMs = performance.now() - t1;
  const peak = Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0) / 1024);
  if (met > 0) throw new Error(`a batch of new ids met ${met} segments`);
  const idf = files.reduce((n, f) => n + statSync(idFilterPath(join(dir, f))).size, 0);
  console.log(
    JSON.stringify({
      impl: old ? `old (${old})` : base ? `base (${base})` : 'new',
      ids: index.size,
      segments: files.length,
      open_ms: Math.round(openMs),
      cover_ms: Math.round(coverMs),
      rss_before_mib: Math.round(before / 2 ** 20),
      rss_after_mib: Math.round(after / 2 ** 20),
      index_mib: +(index.bytes / 2 ** 20).toFixed(1),
      idf_file_mib: +(idf / 2 ** 20).toFixed(1),
      lookup_new_us: +newUs.toFixed(2),
      lookup_existing_us: +existingUs.toFixed(2),
      bulk_batch: batch.length,
      bulk_check_ms: Math.round(bulkMs),
      peak_rss_mib: peak,
      loadavg: readFileSync('/proc/loadavg', 'utf8').trim(),
    }),
  );
}

const [mode, dir] = process.argv.slice(2);
if (mode === 'write' && dir) write(dir);
else if (mode === 'open' && dir) await open(dir);
else {
  console.error(
    'usage: id-open.js write <dir> --ids N --segment N | open <dir> [--cold | --base <checkout> | --old <checkout>] [--lookups N]',
  );
  process.exit(2);
}
