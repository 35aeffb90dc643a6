// Guarantees: a process doing a mix of reliable logging, deletes by filter, catalog changes (projects
// and runs created, renamed, deleted), seals and (in the second test) compaction, killed with
// SIGKILL at random moments again and again, leaves a folder that reopens consistent: every
// acknowledged change is there, and the one change in flight at the kill is either wholly there or
// wholly absent (a request's records all or none; a deleted set all gone or none; a catalog change
// whole). Bounded: TRACELAKE_CRASH_ROUNDS rounds (default 8); more for a longer local run.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { RunKind } from '../../src/catalog/catalog.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { assertConsistent, scan } from '../support/consistency.js';
import { runField, type CrashOp, type CrashState } from '../support/crash-ops.js';
import { Rng } from '../support/fuzz/rng.js';
import { tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const ROUNDS = Number(process.env['TRACELAKE_CRASH_ROUNDS'] ?? 8);

interface Model {
  projects: Map<string, string>;
  runs: Map<string, { projectId: string; kind: RunKind; name: string }>;
  /** Live traces: id -> where, tag and span ids. */
  traces: Map<string, { projectId: string; runId: string; tag: string; spanIds: string[] }>;
  tags: Map<string, { projectId: string; runId: string; kind: RunKind; traceIds: string[] }>;
}

/** Every trace ever logged (acknowledged or in flight): id -> tag, round and what became of it. */
const history = new Map<string, string>();

function apply(m: Model, op: CrashOp): void {
  switch (op.kind) {
    case 'log':
      for (const t of op.traces) history.set(t.id, `${op.tag}, logged`);
      for (const t of op.traces) m.traces.set(t.id, { projectId: op.projectId, runId: op.runId, tag: op.tag, spanIds: t.spanIds });
      m.tags.set(op.tag, { projectId: op.projectId, runId: op.runId, kind: op.runKind, traceIds: op.traces.map((t) => t.id) });
      break;
    case 'delete':
      for (const id of m.tags.get(op.tag)?.traceIds ?? []) {
        m.traces.delete(id);
        history.set(id, `${op.tag}, deleted by op ${op.op}`);
      }
      m.tags.delete(op.tag);
      break;
    case 'createProject':
      m.projects.set(op.id!, op.name);
      break;
    case 'createRun':
      m.runs.set(op.id!, { projectId: op.projectId, kind: op.runKind, name: op.name });
      break;
    case 'renameProject':
      m.projects.set(op.projectId, op.to);
      break;
    case 'renameRun':
      m.runs.get(op.runId)!.name = op.to;
      break;
    case 'deleteRun':
    case 'deleteProject': {
      const gone = (x: { projectId: string; runId?: string }) =>
        op.kind === 'deleteRun' ? x.runId === op.runId : x.projectId === op.projectId;
      for (const [id, t] of m.traces) if (gone(t)) m.traces.delete(id);
      for (const [tag, t] of m.tags) if (gone(t)) m.tags.delete(tag);
      if (op.kind === 'deleteRun') m.runs.delete(op.runId);
      else {
        m.projects.delete(op.projectId);
        for (const [id, r] of m.runs) if (r.projectId === op.projectId) m.runs.delete(id);
      }
      break;
    }
    default:
      break;
  }
}

function runRound(
  dir: string,
  stateFile: string,
  seed: number,
  killAfterMs: number,
  env: Record<string, string> = {},
): Promise<{ acked: CrashOp[]; inflight: CrashOp | null; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeEntry('test/support/crash-worker.ts'), dir, stateFile, String(seed)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const acked: CrashOp[] = [];
    let inflight: CrashOp | null = null;
    let buf = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line === 'ready') timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        else if (line.startsWith('begin ')) inflight = JSON.parse(line.slice(6)) as CrashOp;
        else if (line.startsWith('ack ')) {
          acked.push(JSON.parse(line.slice(4)) as CrashOp);
          inflight = null;
        }
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL') resolve({ acked, inflight, signal });
      else reject(new Error(`worker exited with ${code}: ${err.slice(-2000)}`));
    });
  });
}

interface Observed {
  projects: Map<string, string>;
  runs: Map<string, { projectId: string; name: string }>;
  /** trace id -> its span ids, by run. */
  traces: Map<string, Map<string, string[]>>;
}

async function observe(store: TraceStore): Promise<Observed> {
  const o: Observed = { projects: new Map(), runs: new Map(), traces: new Map() };
  for (const p of store.findProjects()) {
    o.projects.set(p.id, p.name);
    for (const r of store.listRuns(p.id)) {
      o.runs.set(r.id, { projectId: p.id, name: r.name });
      const ids = { [runField(r.kind)]: r.id };
      const byTrace = new Map<string, string[]>();
      for (const t of await scan(store, 'trace', p.id, ids)) byTrace.set(String(t['id']), []);
      for (const s of await scan(store, 'span', p.id, ids)) {
        const list = byTrace.get(String(s['trace_id']));
        assert.ok(list, `span ${String(s['id'])} of run ${r.id} has no trace`);
        list.push(String(s['id']));
      }
      o.traces.set(r.id, byTrace);
    }
    // Nothing outside the live runs: the project-wide count equals the sum over its runs.
    const projectWide = (await store.count('trace', p.id, {})).total_count;
    const inRuns = store.listRuns(p.id).reduce((n, r) => n + (o.traces.get(r.id)?.size ?? 0), 0);
    assert.equal(projectWide, inRuns, `project ${p.name}: records of deleted runs left behind`);
    await assertConsistent(store, p.id, `project ${p.name}`);
  }
  return o;
}

const sameSet = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

/** Checks the model against what is stored, with the one in-flight op wholly applied or not at all; returns which. */
function check(m: Model, o: Observed, inflight: CrashOp | null, round: number): { applied: boolean } {
  const matches = (model: Model): string | null => {
    if (!sameSet([...model.projects.keys()], [...o.projects.keys()]))
      return `projects ${[...model.projects.keys()].length} in the model, ${o.projects.size} stored`;
    for (const [id, name] of model.projects)
      if (o.projects.get(id) !== name) return `project ${id} is named ${o.projects.get(id)}, not ${name}`;
    if (!sameSet([...model.runs.keys()], [...o.runs.keys()])) return `runs ${model.runs.size} in the model, ${o.runs.size} stored`;
    for (const [id, r] of model.runs)
      if (o.runs.get(id)?.name !== r.name) return `run ${id} is named ${o.runs.get(id)?.name}, not ${r.name}`;
    for (const runId of model.runs.keys()) {
      const want = [...model.traces].filter(([, t]) => t.runId === runId);
      const got = o.traces.get(runId) ?? new Map();
      if (want.length !== got.size) {
        const extra = [...got.keys()].filter((id) => !model.traces.has(id)).map((id) => `${id} (${history.get(id) ?? 'never logged'})`);
        const missing = want.filter(([id]) => !got.has(id)).map(([id, t]) => `${id} (${t.tag})`);
        return `run ${runId}: ${want.length} traces in the model, ${got.size} stored; extra: ${extra.join(', ')}; missing: ${missing.join(', ')}`;
      }
      for (const [id, t] of want) {
        const spans = got.get(id);
        if (!spans) return `run ${runId}: trace ${id} (${t.tag}) is missing`;
        if (!sameSet(spans, t.spanIds)) return `trace ${id} (${t.tag}) has ${spans.length} spans, not ${t.spanIds.length}`;
      }
    }
    return null;
  };
  const without = matches(m);
  if (!inflight) {
    assert.equal(without, null, `round ${round}: ${without}`);
    return { applied: false };
  }
  // A created project or run gets its id only when acknowledged: find it by name.
  const resolved = { ...inflight } as CrashOp;
  if (resolved.kind === 'createProject')
    resolved.id = [...o.projects].find(([id, n]) => n === resolved.name && !m.projects.has(id))?.[0] ?? 'absent';
  if (resolved.kind === 'createRun')
    resolved.id = [...o.runs].find(([id, r]) => r.name === resolved.name && !m.runs.has(id))?.[0] ?? 'absent';
  const after: Model = {
    projects: new Map(m.projects),
    runs: new Map([...m.runs].map(([k, v]) => [k, { ...v }])),
    traces: new Map(m.traces),
    tags: new Map(m.tags),
  };
  apply(after, resolved);
  const withOp = matches(after);
  if (without === null) return { applied: false };
  if (withOp === null) {
    apply(m, resolved);
    return { applied: true };
  }
  // Nothing in between is allowed: a run or project deletion interrupted after its records went but
  // before the catalog changed (listed without its records) fails here like any other partial change.
  assert.fail(
    `round ${round}: the change in flight (${JSON.stringify(inflight).slice(0, 300)}) is neither wholly there (${withOp}) nor wholly absent (${without})`,
  );
}

function stateOf(m: Model): CrashState {
  return {
    projects: [...m.projects].map(([id, name]) => ({ id, name })),
    runs: [...m.runs].map(([id, r]) => ({ id, projectId: r.projectId, kind: r.kind, name: r.name })),
    tags: [...m.tags].map(([tag, t]) => ({ tag, projectId: t.projectId, runId: t.runId, kind: t.kind })),
  };
}

async function crashRounds(t: TestContext, rounds: number, compaction: boolean): Promise<void> {
  const dir = tempDir(t);
  const stateFile = join(dir, '..', `${dir.split('/').pop()}-state.json`);
  const m: Model = { projects: new Map(), runs: new Map(), traces: new Map(), tags: new Map() };
  {
    const store = await TraceStore.open(dir);
    for (let i = 0; i < 3; i++) {
      const p = store.createProject({ name: `initial-${i}` });
      m.projects.set(p.id, p.name);
      for (const kind of ['log_stream', 'experiment'] as const) {
        const r = store.catalog.createRun(p.id, kind, `initial-${kind}`);
        m.runs.set(r.id, { projectId: p.id, kind, name: r.name });
      }
    }
    await store.close();
  }
  const rng = new Rng(424242);
  const tally = new Map<string, number>();
  let inflightSeen = 0;
  let killedInCompaction = 0;
  // With compaction in the mix, the rounds go on (up to four times as many) until a compaction was
  // acknowledged and a kill landed inside one: otherwise the test would not have done what it says.
  const compactionSeen = () => (tally.get('compact') ?? 0) > 0 && killedInCompaction > 0;
  let round = 0;
  for (; round < rounds || (compaction && !compactionSeen() && round < rounds * 4); round++) {
    writeFileSync(stateFile, JSON.stringify(stateOf(m)));
    const { acked, inflight } = await runRound(dir, stateFile, 1000 + round, rng.int(150, 1800), {
      TRACELAKE_CRASH_COMPACT: compaction ? '1' : '0',
    });
    if (inflight?.kind === 'log')
      for (const tr of inflight.traces) history.set(tr.id, `${inflight.tag}, in flight at the kill of round ${round}`);
    for (const op of acked)
      if (op.kind === 'delete')
        for (const id of m.tags.get(op.tag)?.traceIds ?? []) history.set(id, `${op.tag}, deleted in round ${round}`);
    for (const op of acked) {
      apply(m, op);
      tally.set(op.kind, (tally.get(op.kind) ?? 0) + 1);
    }
    const store = await TraceStore.open(
      dir,
      compaction ? {} : ({ compaction: { maxSegmentRows: 0, deadShare: Number.POSITIVE_INFINITY } } as never),
    );
    try {
      check(m, await observe(store), inflight, round);
      if (inflight) inflightSeen++;
      if (inflight?.kind === 'compact') killedInCompaction++;
    } finally {
      await store.close();
    }
  }
  t.diagnostic(
    `${round} kills; acknowledged: ${[...tally].map(([k, n]) => `${k} ${n}`).join(', ')}; ` +
      `in flight at a kill: ${inflightSeen} (a compaction: ${killedInCompaction}); live traces ${m.traces.size}`,
  );
  assert.ok((tally.get('log') ?? 0) > rounds * 3, 'the worker made progress');
  if (compaction) {
    assert.ok((tally.get('compact') ?? 0) > 0, `no compaction was acknowledged in ${round} rounds: compaction was not part of the mix`);
    assert.ok(killedInCompaction > 0, `no kill landed inside a compaction in ${round} rounds`);
  }
}

test(
  'SIGKILL during logging, deletes, catalog changes and seals: acknowledged work stays, work in flight is whole or absent',
  { timeout: 300_000 },
  (t) => crashRounds(t, ROUNDS, false),
);

test('the same with compaction in the mix', { timeout: 300_000 }, (t) => crashRounds(t, Math.min(ROUNDS, 6), true));

test('a crash inside a run deletion leaves the run whole or gone, never listed without its records', async (t) => {
  const dir = tempDir(t);
  const m: Model = { projects: new Map(), runs: new Map(), traces: new Map(), tags: new Map() };
  {
    const store = await TraceStore.open(dir);
    const p = store.createProject({ name: 'p' });
    m.projects.set(p.id, p.name);
    for (const name of ['a', 'b', 'c']) {
      const r = store.catalog.createRun(p.id, 'log_stream', name);
      m.runs.set(r.id, { projectId: p.id, kind: 'log_stream', name });
      const traceId = crypto.randomUUID();
      await store.logTraces(p.id, { log_stream_id: r.id, traces: [{ id: traceId, name, tags: [name] }] });
      m.traces.set(traceId, { projectId: p.id, runId: r.id, tag: name, spanIds: [] });
      m.tags.set(name, { projectId: p.id, runId: r.id, kind: 'log_stream', traceIds: [traceId] });
    }
    await store.close();
  }
  const stateFile = join(dir, '..', `${dir.split('/').pop()}-state.json`);
  writeFileSync(stateFile, JSON.stringify({ ...stateOf(m), projects: [] } satisfies CrashState));
  // The worker only deletes runs here (no projects to create in, nothing else weighs more than the kill).
  let deleted: CrashOp | null = null;
  for (let seed = 1; seed < 50 && !deleted; seed++) {
    const { inflight } = await runRound(dir, stateFile, seed, 60_000, { TRACELAKE_CRASH_AT: 'run-delete-catalog' });
    if (inflight?.kind === 'deleteRun') deleted = inflight;
  }
  assert.ok(deleted, 'the worker died inside a run deletion');
  const store = await TraceStore.open(dir);
  try {
    const run = deleted.kind === 'deleteRun' ? deleted.runId : '';
    const listed = store.listRuns([...m.projects.keys()][0]!).some((r) => r.id === run);
    const records = listed ? (await store.count('trace', [...m.projects.keys()][0]!, { log_stream_id: run })).total_count : 0;
    assert.ok(!listed || records > 0, `run listed: ${listed}, its records: ${records} (whole: listed with its records, or gone)`);
  } finally {
    await store.close();
  }
});
