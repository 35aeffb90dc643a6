// Counts by a model and a tag (answered from the segments' value indexes) asked fresh before and after
// the peer benchmark's 1% delete, through the library: wall and process CPU (every thread) of each.
// After the delete every segment holds dead rows; the counts then leave them out by their places in
// the segment (dead-row lists) or read the segment, by build. Works on a fresh copy of a template
// (hard links for immutable files), which it removes. `--store`: the trace-store module of the
// checkout to measure (another worktree's: run builds in turns, one process each).
//   node dist/bench/probes/value-count-dead.js --data /work/fresh1m-f --store <checkout>/dist/src/engine/trace-store.js
//     --copy <dir> [--asks 8] [--seed 1]
import { loadavg } from 'node:os';
import { median } from '../common.js';
import { openTemplateCopy } from './template-copy.js';

const t = await openTemplateCopy(['asks', 'seed']);
const asks = Number(t.args['asks'] ?? 8);
let seed = Number(t.args['seed'] ?? 1);
const next = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};
const { store } = t;
try {
  const body = { log_stream_id: t.logStreamId };
  const count = async (filters: unknown[]) => (await store.count('span', t.projectId, { ...body, filters } as never)).total_count;
  // The models and tags to ask about: the first page's, so each pair is a question nobody asked yet.
  const page = await store.records.search('span', t.projectId, { ...body, pagination: { limit: 200 } } as never);
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
      plan = t.steps().join('; ');
    }
    return {
      wallMedianMs: Number(median(wall).toFixed(1)),
      cpuMedianMs: Number(median(cpu).toFixed(1)),
      wall: wall.map((w) => Math.round(w)),
      plan,
    };
  };
  const before = await round();
  const { deleted } = await t.peerDelete('canary');
  await t.settleLists();
  const after = await round();
  console.log(
    JSON.stringify({
      store: t.args['store'],
      deleted,
      models: models.length,
      tags: tags.length,
      before,
      after,
      loadavg: loadavg().map((x) => Number(x.toFixed(2))),
    }),
  );
} finally {
  await t.close();
}
