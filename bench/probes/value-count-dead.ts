// Counts by a model and a tag (answered from the segments' value indexes) asked fresh before and after
// the peer benchmark's 1% delete, through the library: wall and process CPU (every thread) of each.
// After the delete every segment holds dead rows; the counts then leave them out by their places in
// the segment (dead-row lists) or read the segment, by build. Works on a fresh copy of a template
// (hard links for immutable files), which it removes. `--store`: the trace-store module of the
// checkout to measure (another worktree's: run builds in turns, one process each).
//   node dist/bench/probes/value-count-dead.js --data /work/fresh1m-f --store <checkout>/dist/src/engine/trace-store.js
//     --copy <dir> [--asks 8] [--seed 1]
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { median } from '../common.js';
import { copyStore } from '../peers/store-template.js';

const { values: a } = parseArgs({
  options: {
    data: { type: 'string' },
    store: { type: 'string' },
    copy: { type: 'string' },
    asks: { type: 'string' },
    seed: { type: 'string' },
  },
});
if (!a.data || !a.store || !a.copy) throw new Error('usage: --data <template> --store <trace-store module> --copy <dir>');
const info = JSON.parse(readFileSync(join(a.data, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
const asks = Number(a.asks ?? 8);
let seed = Number(a.seed ?? 1);
const next = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const dir = resolve(a.copy);
rmSync(dir, { recursive: true, force: true });
copyStore(join(a.data, 'tracelake'), dir);

type Mod = typeof import('../../src/engine/trace-store.js');
const { TraceStore } = (await import(resolve(a.store))) as Mod;
let steps: string[] = [];
const store = await TraceStore.open(dir, { onPlan: (s) => (steps = [...s]) });
try {
  const body = { log_stream_id: info.logStreamId };
  const count = async (filters: unknown[]) => (await store.count('span', info.projectId, { ...body, filters } as never)).total_count;
  // The models and tags to ask about: the first page's, so each pair is a question nobody asked yet.
  const page = await store.records.search('span', info.projectId, { ...body, pagination: { limit: 200 } } as never);
  const models = [...new Set(page.records.map((r) => (r as { model?: string }).model).filter((m): m is string => typeof m === 'string'))];
  const tags = [...new Set(page.records.flatMap((r) => (r as { tags?: string[] }).tags ?? []))];
  const used = new Set<string>();
  const pair = () => {
    for (;;) {
      const m = models[Math.floor(next() * models.length)]!;
      const t = tags[Math.floor(next() * tags.length)]!;
      if (!used.has(`${m}\n${t}`)) {
        used.add(`${m}\n${t}`);
        return [
          { type: 'text', column_id: 'model', operator: 'eq', value: m },
          { type: 'collection', column_id: 'tags', operator: 'contains', value: t },
        ];
      }
    }
  };
  const round = async () => {
    const wall: number[] = [];
    const cpu: number[] = [];
    let plan = '';
    for (let i = 0; i < asks; i++) {
      const f = pair();
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await count(f);
      wall.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu.push((c.user + c.system) / 1000);
      plan = steps.join('; ');
    }
    return {
      wallMedianMs: Number(median(wall).toFixed(1)),
      cpuMedianMs: Number(median(cpu).toFixed(1)),
      wall: wall.map((w) => Math.round(w)),
      plan,
    };
  };
  const before = await round();
  const filters = [
    { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
    { type: 'collection', column_id: 'tags', operator: 'contains', value: 'canary' },
  ];
  const { deleted } = await store.records.delete('span', info.projectId, { ...body, filters } as never);
  // Until a count makes no list (the background lists after the delete, or the counts' own).
  for (let i = 0; i < 60; i++) {
    await count([]);
    if (steps.some((s) => /\(0 made\)/.test(s))) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const after = await round();
  console.log(
    JSON.stringify({
      store: a.store,
      deleted,
      models: models.length,
      tags: tags.length,
      before,
      after,
      loadavg: loadavg().map((x) => Number(x.toFixed(2))),
    }),
  );
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
