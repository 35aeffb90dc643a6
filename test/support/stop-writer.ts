// Child process for the exact-point crash test: logs traces of 10-40 spans with reliable: true into
// tiny memory tables (seals every few requests, merges after), printing "ack <trace id> <spans>" after
// each acknowledgement. At the n-th occurrence of a point it stops the whole process where it stands
// (the main thread blocks, so nothing after that step runs) and prints "stopped"; the parent then
// sends SIGKILL. Points:
//   wal-half          the log's write of a request's Arrow batch, after half of its bytes
//   segment-written   a seal's or merge's Parquet file, written by DuckDB, as its fsync starts
//   manifest-renamed  the new manifest, renamed into place, before the store acts on it
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, projectId, logStreamId, point, nth] = process.argv.slice(2) as [string, string, string, string, string];
let left = Number(nth);
let armed = false;
const paths = new Map<number, string>();

function stop(): never {
  fs.writeSync(1, 'stopped\n');
  // Blocks the main thread until the parent's SIGKILL: nothing the store would do next happens.
  for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
const hit = () => armed && --left === 0;

const real = { openSync: fs.openSync, writeSync: fs.writeSync, fsync: fs.fsync, renameSync: fs.renameSync };
fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
  const fd = (real.openSync as (...a: unknown[]) => number)(path, ...rest);
  paths.set(fd, String(path));
  return fd;
}) as typeof fs.openSync;
fs.writeSync = ((fd: number, buf: unknown, ...rest: unknown[]) => {
  if (
    point === 'wal-half' &&
    buf instanceof Uint8Array &&
    rest.length === 0 &&
    buf.length > 1024 &&
    /[/\\]wal[/\\]/.test(paths.get(fd) ?? '') &&
    hit()
  ) {
    real.writeSync(fd, buf, 0, buf.length >> 1);
    stop();
  }
  return (real.writeSync as (...a: unknown[]) => number)(fd, buf, ...rest);
}) as typeof fs.writeSync;
fs.fsync = ((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
  if (point === 'segment-written' && (paths.get(fd) ?? '').endsWith('.parquet') && hit()) stop();
  real.fsync(fd, cb);
}) as typeof fs.fsync;
fs.renameSync = ((from: fs.PathLike, to: fs.PathLike) => {
  real.renameSync(from, to);
  if (point === 'manifest-renamed' && String(to).endsWith('manifest.json') && hit()) stop();
}) as typeof fs.renameSync;
syncBuiltinESMExports();

// mergePauseMs 0: merges run while rows still arrive, so kills land in them too.
const store = await TraceStore.open(dir, {
  memTableBytes: 48 * 1024,
  compaction: { maxSegmentRows: 5_000, deadShare: 0.3 },
  mergePauseMs: 0,
});
armed = true;
for (let i = 0; ; i++) {
  const n = 10 + (i % 31);
  const res = await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    reliable: true,
    traces: [
      {
        name: `t${i}`,
        input: 'q'.repeat(100 + (i % 50)),
        spans: [
          {
            type: 'workflow',
            name: 'wf',
            spans: Array.from({ length: n - 1 }, (_, k) => ({ type: 'tool' as const, name: `tool${k}`, input: 'x'.repeat(50) })),
          },
        ],
      },
    ],
  });
  process.stdout.write(`ack ${res.trace_ids[0]} ${res.spans_count}\n`);
}
