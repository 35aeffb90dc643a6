// Scorer catalog benchmark: registers 10,000 scorers (plus the 73 presets) and times
// POST /v2/scorers/list with a filter and a sort, as a library call and over HTTP on loopback,
// reporting the median of several runs. Target: under 50 ms. Run alone with
// `npm run build && node dist/bench/scorers.js`; bench/run.ts can call benchScorerList().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TraceStore } from '../src/engine/trace-store.js';
import type { ListScorersBody } from '../src/schemas/scorers.js';
import { buildServer } from '../src/server/build-server.js';
import { median, type Measurement } from './common.js';

const REGISTERED = 10_000;
const RUNS = 25;
const TEAMS = 20;
const OUTPUTS = ['percentage', 'boolean', 'categorical', 'discrete'] as const;
const MODELS = ['llm', 'slm', 'code'] as const;

/** A filtered, sorted request as a UI would send it: one team's non-SLM scorers, most recent first. */
const REQUEST: ListScorersBody = {
  filters: [
    { name: 'tags', operator: 'contains', value: 'team-7' },
    { name: 'exclude_slm_scorers' },
    { name: 'name', operator: 'contains', value: 'scorer' },
  ],
  sort: { name: 'updated_at', ascending: false },
};

/** The same list sorted by a run's enabled scorers, over the whole catalog. */
function enabledFirst(runId: string): ListScorersBody {
  return { filters: [{ name: 'is_global', value: true }], sort: { name: 'enabled_in_run', value: runId, ascending: false } };
}

async function timed(fn: () => Promise<unknown> | unknown): Promise<number[]> {
  const xs: number[] = [];
  for (let i = 0; i < RUNS + 3; i++) {
    const t = performance.now();
    await fn();
    if (i >= 3) xs.push(performance.now() - t); // the first calls warm caches and compile serializers
  }
  return xs;
}

export async function benchScorerList(): Promise<Measurement[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tracelake-bench-scorers-'));
  const store = await TraceStore.open(dir);
  try {
    const user = store.users.create({ email: 'bench@localhost' });
    const project = store.createProject({ name: 'bench' }, user);
    const run = store.createLogStream(project.id, 'bench', user);
    const t = performance.now();
    for (let i = 0; i < REGISTERED; i++) {
      store.catalog.createScorer(
        {
          name: `scorer-${String(i).padStart(5, '0')}`,
          scorer_type: i % 3 === 2 ? 'code' : 'llm',
          model_type: MODELS[i % 3]!,
          output_type: OUTPUTS[i % 4]!,
          label: `Scorer ${i}`,
          tags: [`team-${i % TEAMS}`, i % 2 ? 'odd' : 'even'],
          scoreable_node_types: i % 5 ? ['llm'] : ['trace'],
          ...(i % 10 === 0 ? { scope_projects: [{ id: project.id }] } : {}),
        },
        user,
      );
    }
    const registerMs = performance.now() - t;
    const enable = store.catalog
      .listScorers({ filters: [{ name: 'tags', operator: 'eq', value: ['team-3', 'odd'] }] }, { limit: 200 })
      .scorers.slice(0, 100);
    store.catalog.setRunScorerSettings(project.id, run.id, { scorers: enable.map((s) => ({ id: s.id })) });

    const lib = store.catalog.listScorers(REQUEST, { limit: 100 }, user);
    const matched = store.catalog.listScorers(REQUEST, { limit: 1000 }, user).scorers.length;
    const libraryMs = await timed(() => store.catalog.listScorers(REQUEST, { limit: 100, actions: ['update', 'delete'] }, user));
    const enabledMs = await timed(() => store.catalog.listScorers(enabledFirst(run.id), { limit: 100 }, user));

    const key = store.users.createApiKey(user.id).key;
    const app = buildServer({ store });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    let httpMs: number[];
    try {
      const body = JSON.stringify(REQUEST);
      httpMs = await timed(async () => {
        const res = await fetch(`${url}/v2/scorers/list?limit=100&actions=update&actions=delete`, {
          method: 'POST',
          headers: { 'Galileo-API-Key': key, 'content-type': 'application/json' },
          body,
        });
        const page = (await res.json()) as { scorers: unknown[] };
        if (res.status !== 200 || page.scorers.length !== lib.scorers.length) throw new Error(`unexpected answer ${res.status}`);
      });
    } finally {
      await app.close();
    }
    const spread = (xs: number[]) => ({ p10: quantile(xs, 0.1), p90: quantile(xs, 0.9), runs: xs.length });
    return [
      {
        name: 'scorers/list, filter + sort (library)',
        value: median(libraryMs),
        unit: 'ms',
        catalog: REGISTERED + 73,
        matched,
        page: lib.scorers.length,
        target_ms: 50,
        ...spread(libraryMs),
      },
      {
        name: 'scorers/list, filter + sort (HTTP, loopback)',
        value: median(httpMs),
        unit: 'ms',
        catalog: REGISTERED + 73,
        matched,
        page: lib.scorers.length,
        target_ms: 50,
        ...spread(httpMs),
      },
      {
        name: 'scorers/list, enabled_in_run sort over all global scorers (library)',
        value: median(enabledMs),
        unit: 'ms',
        catalog: REGISTERED + 73,
        ...spread(enabledMs),
      },
      { name: 'register a scorer (durable)', value: (REGISTERED / registerMs) * 1000, unit: 'scorers/s', seconds: registerMs / 1000 },
    ];
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const m of await benchScorerList()) process.stdout.write(`${JSON.stringify(m)}\n`);
}
