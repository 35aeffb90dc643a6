// Power-loss model, judging side (test only): what a store opened on the image of a cut after journal
// event k (power-image.ts) must show, given what the writer sent and acknowledged (power-workload.ts).
// An operation sent at position s has no effect before event s+1; one acknowledged at position a is in
// every image from a on, if it was durable (reliable puts, deletes, drops, catalog changes).
import { TraceStore } from '../../src/engine/trace-store.js';

export interface AckLine {
  op: number;
  kind: 'put' | 'del' | 'dropRun' | 'dropProject' | 'project' | 'run' | 'flush' | 'compact';
  sent: number;
  acked: number;
  ids?: string[];
  projectId?: string;
  runId?: string;
  tag?: string;
  reliable?: boolean;
  name?: string;
}

interface IdOp {
  present: boolean;
  tag: string | null;
  durable: boolean;
  sent: number;
  acked: number;
}

export class PowerModel {
  readonly #byId = new Map<string, IdOp[]>();
  readonly #catalog: AckLine[] = [];
  readonly #runOf = new Map<string, { projectId: string; runId: string }>();

  constructor(lines: readonly AckLine[]) {
    for (const l of lines) {
      if (l.kind === 'put' || l.kind === 'del' || l.kind === 'dropRun' || l.kind === 'dropProject') {
        for (const id of l.ids ?? []) {
          const list = this.#byId.get(id) ?? [];
          const present = l.kind === 'put';
          list.push({ present, tag: present ? l.tag! : null, durable: !present || l.reliable === true, sent: l.sent, acked: l.acked });
          this.#byId.set(id, list);
          if (present) this.#runOf.set(id, { projectId: l.projectId!, runId: l.runId! });
        }
      }
      if (l.kind === 'project' || l.kind === 'run' || l.kind === 'dropRun' || l.kind === 'dropProject') this.#catalog.push(l);
    }
  }

  /** States (a tag, or null for absent) an id may show after a cut after event k. */
  allowed(id: string, k: number): Set<string | null> {
    const ops = this.#byId.get(id) ?? [];
    let last = -1;
    ops.forEach((o, i) => {
      if (o.durable && o.acked <= k) last = i;
    });
    const out = new Set<string | null>();
    if (last < 0) out.add(null);
    for (let i = Math.max(last, 0); i < ops.length; i++) if (i === last || ops[i]!.sent < k) out.add(ops[i]!.present ? ops[i]!.tag : null);
    return out;
  }

  /**
   * Opens the image and returns what is wrong with it (empty: the cut is fine). Also checks the store
   * takes a reliable write after recovery.
   */
  async check(dir: string, k: number): Promise<string[]> {
    const problems: string[] = [];
    let store: TraceStore;
    try {
      store = await TraceStore.open(dir, { threads: 1, autoCompact: false });
    } catch (err) {
      return [`the store does not open: ${(err as Error).message} ${String((err as Error).cause ?? '')}`];
    }
    try {
      const projects = new Set(store.findProjects().map((p) => p.id));
      const runs = new Set<string>();
      for (const p of projects) for (const r of store.listRuns(p)) runs.add(r.id);
      for (const c of this.#catalog) {
        if (c.acked > k) continue;
        const id = c.kind === 'project' || c.kind === 'dropProject' ? c.projectId : c.runId;
        if (c.kind === 'project' || c.kind === 'run') {
          // Created and acknowledged before the cut: present unless a drop of it (or its project) was sent before it.
          const dropped = this.#catalog.some(
            (d) =>
              d.sent < k &&
              ((d.kind === 'dropProject' && d.projectId === c.projectId) ||
                (d.kind === 'dropRun' && c.kind === 'run' && d.runId === c.runId)),
          );
          const present =
            c.kind === 'project'
              ? [...projects].some((p) => store.catalog.getProject(p).name === c.name)
              : runs.has(c.runId ?? '') || [...projects].some((p) => store.listRuns(p).some((r) => r.name === c.name));
          if (!present && !dropped) problems.push(`catalog: ${c.kind} ${c.name} acknowledged at ${c.acked} is missing`);
        } else if ((c.kind === 'dropProject' && projects.has(id!)) || (c.kind === 'dropRun' && runs.has(id!))) {
          problems.push(`catalog: ${c.kind} ${id} acknowledged at ${c.acked} is back`);
        }
      }
      const seen = new Map<string, string[]>();
      for (const p of projects) {
        for (const r of store.listRuns(p)) {
          let token: number | null = 0;
          do {
            const page = await store.search('trace', p, { log_stream_id: r.id, limit: 500, starting_token: token });
            for (const rec of page.records) {
              const id = String(rec['id']);
              seen.set(id, [...(seen.get(id) ?? []), String(rec['output'])]);
            }
            token = page.next_starting_token;
          } while (token !== null);
        }
      }
      for (const [id, tags] of seen) if (tags.length > 1) problems.push(`${id} is there ${tags.length} times (${tags.join(', ')})`);
      for (const id of this.#byId.keys()) {
        const got = seen.get(id)?.[0] ?? null;
        const ok = this.allowed(id, k);
        if (!ok.has(got))
          problems.push(`${id}: shows ${got ?? 'nothing'}, expected one of ${[...ok].map((x) => x ?? 'nothing').join(', ')}`);
      }
      // The store takes a durable write after recovery.
      const p = [...projects][0];
      if (p !== undefined) {
        const run = store.listRuns(p)[0];
        if (run)
          await store.logTraces(p, {
            log_stream_id: run.id,
            reliable: true,
            traces: [{ name: 'after', input: 'i', output: 'o', spans: [] }],
          } as never);
      }
    } catch (err) {
      problems.push(`checking failed: ${(err as Error).message}`);
    } finally {
      await store.close().catch((err: unknown) => problems.push(`close failed: ${(err as Error).message}`));
    }
    return problems;
  }
}
