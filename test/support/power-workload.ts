// The power-loss test's writer (run as a child: node --import tsx power-workload.ts <journal> <data>
// <scenario> <seed> <ops>). It records the durable state through fs-recorder.ts while it drives a real
// TraceStore, and appends to <journal>/acks.ndjson, for every operation, the journal position when it
// was sent and when it was acknowledged (see power-model.ts for how a cut is judged).
import { appendFileSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { installRecorder, journalPosition } from './fs-recorder.js';
import type { AckLine } from './power-model.js';

const [journal, data, scenario, seedText, opsText] = process.argv.slice(2) as [string, string, string, string, string];
mkdirSync(data, { recursive: true });
const rootStat = statSync(data, { bigint: true });
installRecorder(journal, data);
const acks = join(journal, 'acks.ndjson');
appendFileSync(acks, `${JSON.stringify({ root: `${rootStat.ino}:${rootStat.birthtimeNs}` })}\n`);

const { TraceStore } = await import('../../src/engine/trace-store.js');

// sfc32 seeded by splitmix32 (deterministic: the same seed drives the same operations)
let s0 = Number(seedText) >>> 0;
const split = () => {
  s0 = (s0 + 0x9e3779b9) | 0;
  let z = s0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
};
let [a, b, c, d] = [split(), split(), split(), split()];
const rand = (): number => {
  const t = (((a + b) | 0) + d) | 0;
  d = (d + 1) | 0;
  a = b ^ (b >>> 9);
  b = (c + (c << 3)) | 0;
  c = (c << 21) | (c >>> 11);
  c = (c + t) | 0;
  return (t >>> 0) / 4294967296;
};
const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

let opNo = 0;
/** Sends one operation: logs its send position, runs it, logs its acknowledgement position. */
async function op<T>(
  line: Omit<AckLine, 'op' | 'sent' | 'acked'>,
  fn: () => Promise<T>,
  more: (out: T) => Partial<AckLine> = () => ({}),
): Promise<T> {
  const no = ++opNo;
  const sent = journalPosition();
  const out = await fn();
  appendFileSync(acks, `${JSON.stringify({ ...line, ...more(out), op: no, sent, acked: journalPosition() })}\n`);
  return out;
}

/** A Parquet export (written by a store of its own, outside the recorded folder) of traces with these ids and output `tag`. */
async function exportOf(ids: readonly string[], tag: string): Promise<string> {
  const sideDir = join(journal, '..', `side-${tag}`);
  const side = await TraceStore.open(sideDir, { threads: 1 });
  const p = side.createProject({ name: 'side' });
  const s = side.createLogStream(p.id, 'side');
  await side.logTraces(p.id, {
    log_stream_id: s.id,
    traces: ids.map((id) => ({
      id,
      name: 'imported',
      input: 'i',
      output: tag,
      spans: [{ type: 'tool', name: 'tool', input: 'x' }],
    })) as never,
  });
  const file = join(journal, '..', `import-${tag}.parquet`);
  await side.data.exportFile(p.id, file, { format: 'parquet' });
  await side.close();
  return file;
}

// The reproduction merges only when asked (as in the review: four seals, the update, then compact).
// The text index's own power-loss test asks for it (it is off by default).
const store = await TraceStore.open(data, {
  memTableBytes: 24 * 1024,
  threads: 1,
  autoCompact: scenario !== 'dead-before-wal',
  textIndex: process.env['TL_TEXT_INDEX'] === '1',
});
const runs: { projectId: string; runId: string }[] = [];
const live = new Map<string, { projectId: string; runId: string }>();
let traceNo = 0;

async function newProject(): Promise<void> {
  const name = `p${++traceNo}`;
  const p = await op(
    { kind: 'project', name },
    async () => store.createProject({ name }),
    (x) => ({ projectId: x.id }),
  );
  await newRun(p.id);
}
async function newRun(projectId: string): Promise<void> {
  const name = `s${++traceNo}`;
  const r = await op(
    { kind: 'run', projectId, name },
    async () => store.createLogStream(projectId, name),
    (x) => ({ runId: x.id }),
  );
  runs.push({ projectId, runId: r.id });
}
async function logNew(reliable: boolean, run = pick(runs)): Promise<void> {
  const traces = Array.from({ length: 1 + Math.floor(rand() * 2) }, () => {
    const id = crypto.randomUUID();
    return {
      id,
      name: `t${++traceNo}`,
      input: 'i'.repeat(200 + Math.floor(rand() * 800)),
      output: `v${opNo + 1}`,
      spans: [{ type: 'tool', name: 'tool', input: 'x'.repeat(300) }],
    };
  });
  await op({ kind: 'put', ids: traces.map((t) => t.id), projectId: run.projectId, runId: run.runId, tag: `v${opNo + 1}`, reliable }, () =>
    store.logTraces(run.projectId, { log_stream_id: run.runId, reliable, traces } as never),
  );
  for (const t of traces) live.set(t.id, run);
}
async function update(reliable: boolean, id: string): Promise<void> {
  const run = live.get(id)!;
  const tag = `v${opNo + 1}`;
  await op({ kind: 'put', ids: [id], projectId: run.projectId, runId: run.runId, tag, reliable }, () =>
    store.records.updateRecord('trace', run.projectId, id, { log_stream_id: run.runId, output: tag, reliable }),
  );
}
async function relog(id: string): Promise<void> {
  const run = live.get(id)!;
  const tag = `v${opNo + 1}`;
  await op({ kind: 'put', ids: [id], projectId: run.projectId, runId: run.runId, tag, reliable: true }, () =>
    store.logTraces(run.projectId, {
      log_stream_id: run.runId,
      reliable: true,
      traces: [{ id, name: 'again', input: 'again', output: tag, spans: [] }],
    } as never),
  );
}
async function remove(id: string): Promise<void> {
  const run = live.get(id)!;
  await op({ kind: 'del', ids: [id], projectId: run.projectId, runId: run.runId }, () =>
    store.records.delete('trace', run.projectId, {
      log_stream_id: run.runId,
      filters: [{ type: 'id', column_id: 'id', value: id }],
    } as never),
  );
  live.delete(id);
}
async function dropRun(run: { projectId: string; runId: string }, whole: boolean): Promise<void> {
  const ids = [...live].filter(([, r]) => (whole ? r.projectId === run.projectId : r.runId === run.runId)).map(([id]) => id);
  await op({ kind: whole ? 'dropProject' : 'dropRun', ids, projectId: run.projectId, runId: run.runId }, () =>
    whole ? store.catalog.deleteProject(run.projectId) : store.catalog.deleteRun(run.projectId, run.runId),
  );
  for (const id of ids) live.delete(id);
  for (let i = runs.length - 1; i >= 0; i--)
    if (whole ? runs[i]!.projectId === run.projectId : runs[i]!.runId === run.runId) runs.splice(i, 1);
}

if (scenario === 'dead-before-wal') {
  // Review reproduction 2: a sealed, acknowledged trace is updated with reliable:false, then merged.
  await newProject();
  const run = runs[0]!;
  for (let i = 0; i < 4; i++) {
    await logNew(true, run);
    await op({ kind: 'flush' }, () => store.flush());
  }
  const target = [...live.keys()][0]!;
  await update(false, target);
  await op({ kind: 'compact' }, () => store.maintenance.compact());
  await logNew(false, run);
  await op({ kind: 'compact' }, () => store.maintenance.compact());
} else if (scenario === 'seal-after-failure') {
  // A seal fails (EIO), the record is re-logged with reliable:false into the next log file, whose
  // fsync then fails too; the retried seal of the first table must keep the acknowledged version.
  const { arm, disarm, installFaults } = await import('./fs-faults.js');
  installFaults();
  await newProject();
  const run = runs[0]!;
  await logNew(true, run);
  const target = [...live.keys()][0]!;
  arm(
    data,
    (c) => c.fn === 'fsyncSync' && c.path.endsWith('.parquet'),
    () => 'EIO',
  );
  await op({ kind: 'flush' }, () => store.flush()).catch(() => undefined);
  disarm();
  const tag = `v${opNo + 1}`;
  await op({ kind: 'put', ids: [target], projectId: run.projectId, runId: run.runId, tag, reliable: false }, () =>
    store.logTraces(run.projectId, {
      log_stream_id: run.runId,
      reliable: false,
      traces: [{ id: target, name: 'again', input: 'again', output: tag, spans: [] }],
    } as never),
  );
  arm(
    data,
    (c) => c.fn === 'fsync' && c.path.includes('/wal/'),
    () => 'EIO',
  );
  await op({ kind: 'flush' }, () => store.flush()).catch(() => undefined);
  disarm();
} else if (scenario === 'import') {
  // The direct import (straight into segments) over records logged before it, sealed and not, then
  // writes after it, a second import of the same file and merges.
  await newProject();
  const run = runs[0]!;
  await logNew(true, run);
  await op({ kind: 'flush' }, () => store.flush());
  await logNew(true, run);
  const ids = [...[...live.keys()].slice(0, 3), crypto.randomUUID(), crypto.randomUUID()];
  const tag = `v${opNo + 1}`;
  const file = await exportOf(ids, tag);
  const target = { project: store.catalog.getProject(run.projectId).name, logStream: store.listRuns(run.projectId)[0]!.name };
  const imported = { kind: 'put' as const, ids, projectId: run.projectId, runId: run.runId, tag, reliable: true };
  await op(imported, () => store.data.importFile(file, target));
  for (const id of ids) live.set(id, run);
  await relog(ids[0]!);
  await update(false, ids[1]!);
  await logNew(true, run);
  await op(imported, () => store.data.importFile(file, target));
  await op({ kind: 'flush' }, () => store.flush());
  await op({ kind: 'compact' }, () => store.maintenance.compact());
} else {
  await newProject();
  const ops = Number(opsText);
  for (let i = 0; i < ops; i++) {
    const r = rand();
    const ids = [...live.keys()];
    if (r < 0.28 || ids.length === 0) await logNew(true);
    else if (r < 0.38) await logNew(false);
    else if (r < 0.5) await update(true, pick(ids));
    else if (r < 0.6) await update(false, pick(ids));
    else if (r < 0.66) await relog(pick(ids));
    else if (r < 0.76) await remove(pick(ids));
    else if (r < 0.83) await op({ kind: 'flush' }, () => store.flush());
    else if (r < 0.88) await op({ kind: 'compact' }, () => store.maintenance.compact());
    else if (r < 0.92) await newRun(pick(runs).projectId);
    else if (r < 0.95) await newProject();
    else if (runs.length > 1) {
      const victim = pick(runs.slice(1));
      await dropRun(victim, victim.projectId !== runs[0]!.projectId && rand() < 0.5);
    }
  }
}
// No close: the process ends the way a power cut would find it (the journal holds what was durable).
process.exit(0);
