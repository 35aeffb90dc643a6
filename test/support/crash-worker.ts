// Child process for the extended crash test: a random mix of logging (reliable), deletes by filter,
// catalog changes (projects and runs created, renamed, deleted), seals and compaction (unless
// TRACELAKE_CRASH_COMPACT=0), as fast as it can, until it is killed. Before each operation it prints
// `begin <json>`, after it `ack <json>`, one line each, so the parent knows what was acknowledged and
// what was in flight.
//
// argv: data folder, state file (JSON: the live projects, runs and logged tags), seed.
// TRACELAKE_CRASH_AT=run-delete-catalog kills the process right before a run deletion takes the run
// out of the catalog (its intent already recorded), to show what a crash inside a deletion leaves.
import { readFileSync } from 'node:fs';
import type { RunKind } from '../../src/catalog/catalog.js';
import { noCompaction, runField, type CrashOp, type CrashState } from './crash-ops.js';
import type { CatalogChange } from '../../src/catalog/catalog-log.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { Rng } from './fuzz/rng.js';
import { internalsOf } from '../../src/engine/internals.js';

async function main(): Promise<void> {
  const [dir, stateFile, seedText] = process.argv.slice(2) as [string, string, string];
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as CrashState;
  const rng = new Rng(Number(seedText));
  const store = await TraceStore.open(dir, { sealRows: 300, walRollBytes: 16 * 1024, ...noCompaction() });
  if (process.env['TRACELAKE_CRASH_AT'] === 'run-delete-catalog') {
    const commit = internalsOf(store).catalog.commit.bind(internalsOf(store).catalog);
    internalsOf(store).catalog.commit = (changes: readonly CatalogChange[]) => {
      if (changes.some((c) => c.op === 'del' && c.table === 'runs')) process.kill(process.pid, 'SIGKILL');
      commit(changes);
    };
  }
  const say = (t: 'begin' | 'ack', op: CrashOp) => process.stdout.write(`${t} ${JSON.stringify(op)}\n`);
  process.stdout.write('ready\n');
  const compact = process.env['TRACELAKE_CRASH_COMPACT'] !== '0';
  for (let op = 0; ; op++) {
    const choice = rng.weighted<CrashOp['kind']>([
      [state.runs.length ? 45 : 0, 'log'],
      [state.tags.length ? 15 : 0, 'delete'],
      [6, 'flush'],
      [state.projects.length < 4 ? 6 : 1, 'createProject'],
      [state.projects.length ? 7 : 0, 'createRun'],
      [state.projects.length ? 5 : 0, 'renameProject'],
      [state.runs.length ? 5 : 0, 'renameRun'],
      [state.runs.length > 2 ? 5 : 0, 'deleteRun'],
      [state.projects.length > 2 ? 2 : 0, 'deleteProject'],
      [compact ? 10 : 0, 'compact'],
    ]);
    switch (choice) {
      case 'log': {
        const run = rng.pick(state.runs);
        const tag = `tag-${seedText}-${op}`;
        const traces = Array.from({ length: rng.int(1, 3) }, () => ({
          id: rng.uuid(),
          spanIds: Array.from({ length: rng.int(0, 4) }, () => rng.uuid()),
        }));
        const o: CrashOp = { kind: 'log', op, projectId: run.projectId, runId: run.id, runKind: run.kind, tag, traces };
        say('begin', o);
        await store.logTraces(run.projectId, {
          [runField(run.kind)]: run.id,
          reliable: true,
          traces: traces.map((t, i) => ({
            id: t.id,
            name: `${tag}-${i}`,
            input: 'q'.repeat(rng.int(10, 300)),
            tags: [tag],
            metrics: rng.chance(0.5) ? { [`m${rng.int(0, 3)}`]: rng.int(0, 100) } : {},
            spans: t.spanIds.length
              ? [
                  {
                    id: t.spanIds[0]!,
                    type: 'workflow' as const,
                    name: 'wf',
                    spans: t.spanIds
                      .slice(1)
                      .map((id, k) => ({ id, type: 'tool' as const, name: `tool${k}`, input: 'x'.repeat(50), metrics: { score: k } })),
                  },
                ]
              : [],
          })),
        });
        say('ack', o);
        state.tags.push({ tag, projectId: run.projectId, runId: run.id, kind: run.kind });
        break;
      }
      case 'delete': {
        const i = rng.int(0, state.tags.length - 1);
        const t = state.tags[i]!;
        const o: CrashOp = { kind: 'delete', op, projectId: t.projectId, runId: t.runId, tag: t.tag };
        say('begin', o);
        await store.records.delete('trace', t.projectId, {
          [runField(t.kind)]: t.runId,
          filters: [{ type: 'collection', column_id: 'tags', operator: 'contains', value: t.tag }],
        });
        say('ack', o);
        state.tags.splice(i, 1);
        break;
      }
      case 'flush':
        say('begin', { kind: 'flush', op });
        await store.flush();
        say('ack', { kind: 'flush', op });
        break;
      case 'compact':
        say('begin', { kind: 'compact', op });
        await store.maintenance.compact();
        say('ack', { kind: 'compact', op });
        break;
      case 'createProject': {
        const o: CrashOp = { kind: 'createProject', op, name: `project-${seedText}-${op}` };
        say('begin', o);
        const p = store.createProject({ name: o.name });
        say('ack', { ...o, id: p.id });
        state.projects.push({ id: p.id, name: o.name });
        break;
      }
      case 'createRun': {
        const p = rng.pick(state.projects);
        const runKind = rng.pick<RunKind>(['log_stream', 'log_stream', 'experiment', 'metrics_testing']);
        const o: CrashOp = { kind: 'createRun', op, projectId: p.id, runKind, name: `run-${seedText}-${op}` };
        say('begin', o);
        const r = store.catalog.createRun(p.id, runKind, o.name);
        say('ack', { ...o, id: r.id });
        state.runs.push({ id: r.id, projectId: p.id, kind: runKind, name: o.name });
        break;
      }
      case 'renameProject': {
        const p = rng.pick(state.projects);
        const o: CrashOp = { kind: 'renameProject', op, projectId: p.id, from: p.name, to: `renamed-${seedText}-${op}` };
        say('begin', o);
        store.catalog.renameProject(p.id, o.to);
        say('ack', o);
        p.name = o.to;
        break;
      }
      case 'renameRun': {
        const r = rng.pick(state.runs);
        const o: CrashOp = {
          kind: 'renameRun',
          op,
          projectId: r.projectId,
          runId: r.id,
          from: r.name,
          to: `renamed-run-${seedText}-${op}`,
        };
        say('begin', o);
        store.catalog.renameRun(r.projectId, r.id, o.to);
        say('ack', o);
        r.name = o.to;
        break;
      }
      case 'deleteRun': {
        const r = rng.pick(state.runs);
        const o: CrashOp = { kind: 'deleteRun', op, projectId: r.projectId, runId: r.id };
        say('begin', o);
        await store.catalog.deleteRun(r.projectId, r.id);
        say('ack', o);
        state.runs = state.runs.filter((x) => x.id !== r.id);
        state.tags = state.tags.filter((x) => x.runId !== r.id);
        break;
      }
      case 'deleteProject': {
        const p = rng.pick(state.projects);
        const o: CrashOp = { kind: 'deleteProject', op, projectId: p.id };
        say('begin', o);
        await store.catalog.deleteProject(p.id);
        say('ack', o);
        state.projects = state.projects.filter((x) => x.id !== p.id);
        state.runs = state.runs.filter((x) => x.projectId !== p.id);
        state.tags = state.tags.filter((x) => x.projectId !== p.id);
        break;
      }
    }
  }
}

await main();
