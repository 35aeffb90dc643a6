// A store that has been through everything an Iceberg reader must see right (logging in two runs,
// updates, deletes by filter that leave a parent childless, seals, a merge, tombstones after it,
// retention expiring a run's old records), and the questions both tracelake and ClickHouse answer
// about it: counts per run and kind, the ids, a metric's sum and the parents with children.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { TraceStore } from '../../src/engine/trace-store.js';
import type { PutFileResult, Target } from '../../src/iceberg/target.js';
import { everyKindTrace, tempDir } from './helpers.js';

export interface Scenario {
  /** chdb's working directory: the store and local targets are below it. */
  readonly root: string;
  readonly dir: string;
  readonly store: TraceStore;
  readonly projectId: string;
  readonly runs: readonly string[];
}

const DAY = 86_400_000;

function tracesAt(prefix: string, n: number, ageMs: (i: number) => number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => {
    const t = everyKindTrace(`${prefix}${i}`) as Record<string, any>;
    const at = (ms: number) => new Date(Date.now() - ageMs(i) + ms).toISOString();
    const walk = (r: any, ms: number) => {
      r.created_at = at(ms);
      (r.spans ?? []).forEach((s: any, k: number) => {
        walk(s, ms + k + 1);
      });
    };
    walk(t, 0);
    return t;
  });
}

/** Logs, updates, deletes, seals, merges and expires records; returns the store, open. */
export async function scenarioStore(t: TestContext): Promise<Scenario> {
  const root = tempDir(t, 'tracelake-iceberg-');
  const dir = join(root, 'store');
  mkdirSync(dir);
  const store = await TraceStore.open(dir, { autoCompact: false });
  t.after(() => store.close());
  const projectId = store.createProject({ name: 'lake' }).id;
  const a = store.createLogStream(projectId, 'a').id;
  const b = store.createLogStream(projectId, 'b').id;
  // Four seals of each run, so a compaction merges them.
  const aTraces = tracesAt('a', 32, (i) => i * 60_000);
  const bTraces = [...tracesAt('b', 20, (i) => i * 60_000), ...tracesAt('old', 12, () => 40 * DAY)];
  for (let k = 0; k < 4; k++) {
    await store.logTraces(projectId, { log_stream_id: a, traces: aTraces.slice(k * 8, k * 8 + 8) as never });
    await store.logTraces(projectId, { log_stream_id: b, traces: bTraces.slice(k * 8, k * 8 + 8) as never });
    await store.flush();
  }
  // Updates: new versions of spans and traces (the old rows stay in their segments, dead).
  const llm = await store.data.sql("SELECT id, run_id FROM spans WHERE name = 'chat' ORDER BY id LIMIT 6");
  for (const r of llm)
    await store.records.updateRecord('span', projectId, String(r['id']), {
      log_stream_id: String(r['run_id']),
      output: 'revised',
      duration_ns: 7,
    });
  const tr = await store.data.sql('SELECT id FROM traces WHERE run_id = $1 ORDER BY id LIMIT 3', [a]);
  for (const r of tr) await store.records.updateRecord('trace', projectId, String(r['id']), { log_stream_id: a, tags: ['revised'] });
  // Deletes by filter: whole traces, and the two children of a workflow span (left childless).
  await store.records.delete('trace', projectId, {
    log_stream_id: a,
    filters: [{ type: 'text', name: 'name', operator: 'one_of', value: ['trace-a5', 'trace-a6', 'trace-a7'] }],
  } as never);
  const lookup = await store.data.sql("SELECT id FROM spans WHERE name = 'lookup' AND run_id = $1 ORDER BY id LIMIT 1", [a]);
  const under = String(lookup[0]!['id']);
  await store.records.delete('span', projectId, {
    log_stream_id: a,
    filters: [{ type: 'id', name: 'parent_id', operator: 'eq', value: under }],
  } as never);
  await store.flush();
  assert.ok((await store.maintenance.compact()).merges > 0, 'the seals merged, purging what is dead so far');
  // After the merge: more tombstones in merged segments, and records of b past its retention.
  await store.records.delete('trace', projectId, {
    log_stream_id: b,
    filters: [{ type: 'text', name: 'name', operator: 'eq', value: 'trace-b3' }],
  } as never);
  const more = await store.data.sql("SELECT id FROM spans WHERE name = 'planner' AND run_id = $1 ORDER BY id LIMIT 2", [b]);
  for (const r of more) await store.records.updateRecord('span', projectId, String(r['id']), { log_stream_id: b, output: 'again' });
  store.data.setRetention(projectId, { log_stream_id: b, retention_days: 30 });
  assert.equal(
    (await store.count('trace', projectId, { log_stream_id: b })).total_count,
    19,
    'the old traces have expired, trace-b3 is deleted',
  );
  return { root, dir, store, projectId, runs: [a, b] };
}

export const TABLES = ['spans', 'traces', 'sessions'] as const;

/** What tracelake answers, in the shape the ClickHouse queries below return. */
export async function tracelakeAnswers(s: Scenario): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const level = { spans: 'span', traces: 'trace', sessions: 'session' } as const;
  for (const table of TABLES) {
    const perRun = [];
    for (const run of [...s.runs].sort()) {
      const n = (await s.store.count(level[table], s.projectId, { log_stream_id: run })).total_count;
      if (n > 0) perRun.push({ run_id: run, n });
    }
    out[`${table}.count`] = perRun;
    out[`${table}.ids`] = (await s.store.data.sql(`SELECT id FROM ${table} ORDER BY id`)).map((r) => String(r['id']));
  }
  out['spans.metric'] = (
    await s.store.data.sql('SELECT run_id, sum(num_input_tokens) AS s, count(duration_ns) AS d FROM spans GROUP BY run_id ORDER BY run_id')
  ).map((r) => ({ run_id: r['run_id'], s: Number(r['s']), d: Number(r['d']) }));
  out['spans.parents'] = (await s.store.data.sql('SELECT id FROM spans WHERE has_children ORDER BY id')).map((r) => String(r['id']));
  return out;
}

/** The same questions in ClickHouse SQL over table expressions (`icebergLocal('…/spans')`, …). */
export function clickhouseQueries(from: (table: string) => string): string[] {
  const q: string[] = [];
  for (const table of TABLES) {
    q.push(`SELECT run_id, toUInt64(count()) AS n FROM ${from(table)} GROUP BY run_id ORDER BY run_id`);
    q.push(`SELECT id FROM ${from(table)} ORDER BY id`);
  }
  q.push(`SELECT run_id, sum(num_input_tokens) AS s, count(duration_ns) AS d FROM ${from('spans')} GROUP BY run_id ORDER BY run_id`);
  q.push(`SELECT id FROM ${from('spans')} WHERE has_children ORDER BY id`);
  return q;
}

/** ClickHouse's rows (from clickhouseQueries) in tracelakeAnswers' shape. */
export function clickhouseAnswers(rows: Record<string, unknown>[][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let i = 0;
  for (const table of TABLES) {
    out[`${table}.count`] = rows[i++]!.map((r) => ({ run_id: r['run_id'], n: Number(r['n']) }));
    out[`${table}.ids`] = rows[i++]!.map((r) => String(r['id']));
  }
  out['spans.metric'] = rows[i++]!.map((r) => ({ run_id: r['run_id'], s: Number(r['s']), d: Number(r['d']) }));
  out['spans.parents'] = rows[i++]!.map((r) => String(r['id']));
  return out;
}

/**
 * A target that stops a publish before its `at`-th write (put, file placement, or one removal):
 * `throw` fails it as a refused upload would; `kill` ends the process on the spot (SIGKILL).
 */
export class InterruptingTarget implements Target {
  #steps = 0;
  constructor(
    readonly inner: Target,
    readonly at: number,
    readonly how: 'throw' | 'kill',
  ) {}

  get root(): string {
    return this.inner.root;
  }

  /** Writes done or attempted so far. */
  get steps(): number {
    return this.#steps;
  }

  #step(what: string): void {
    if (++this.#steps !== this.at) return;
    if (this.how === 'kill') process.kill(process.pid, 'SIGKILL');
    throw new Error(`interrupted before write ${this.at} (${what})`);
  }

  uri(rel: string): string {
    return this.inner.uri(rel);
  }

  list(relDir: string): Promise<Map<string, number>> {
    return this.inner.list(relDir);
  }

  get(rel: string): Promise<Buffer | null> {
    return this.inner.get(rel);
  }

  async put(rel: string, bytes: Uint8Array): Promise<void> {
    this.#step(`put ${rel}`);
    await this.inner.put(rel, bytes);
  }

  async putFile(rel: string, source: string, size: number): Promise<PutFileResult> {
    this.#step(`place ${rel}`);
    return this.inner.putFile(rel, source, size);
  }

  async remove(rels: readonly string[]): Promise<void> {
    for (const rel of rels) {
      this.#step(`remove ${rel}`);
      await this.inner.remove([rel]);
    }
  }
}

/** Per table, the ids tracelake's reads return now. */
export async function idsByTable(store: TraceStore): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of TABLES) out[table] = (await store.data.sql(`SELECT id FROM ${table} ORDER BY id`)).map((r) => String(r['id']));
  return out;
}
