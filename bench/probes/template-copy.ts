// What the probes of counts after the peer benchmark's 1% delete share: a fresh copy of a template
// (hard links for immutable files) opened with the trace store of the checkout to measure (another
// worktree's module, to compare builds in turns), the delete itself, and waiting until the segments'
// dead-row lists are made. Arguments: --data <template> --store <trace-store module> --copy <dir>.
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { copyStore } from '../peers/store-template.js';

type Mod = typeof import('../../src/engine/trace-store.js');
type Store = Awaited<ReturnType<Mod['TraceStore']['open']>>;

export interface TemplateCopy {
  readonly args: Record<string, string | undefined>;
  readonly store: Store;
  readonly projectId: string;
  readonly logStreamId: string;
  /** The plan steps of the last question. */
  steps(): readonly string[];
  /** Deletes llm spans with the tag (the peer benchmark's 1% delete); resolves with how many went and how long it took. */
  peerDelete(tag: string): Promise<{ deleted: number; ms: number }>;
  /** Asks unfiltered counts until one makes no dead-row list (the background lists, or the counts' own); returns how many. */
  settleLists(): Promise<number>;
  close(): Promise<void>;
}

/** `extra`: the probe's own string options besides --data, --store and --copy. */
export async function openTemplateCopy(extra: readonly string[]): Promise<TemplateCopy> {
  const options = Object.fromEntries(['data', 'store', 'copy', ...extra].map((k) => [k, { type: 'string' as const }]));
  const { values: args } = parseArgs({ options }) as { values: Record<string, string | undefined> };
  if (!args['data'] || !args['store'] || !args['copy'])
    throw new Error('usage: --data <template> --store <trace-store module> --copy <dir>');
  const info = JSON.parse(readFileSync(join(args['data'], 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };
  const dir = resolve(args['copy']);
  rmSync(dir, { recursive: true, force: true });
  copyStore(join(args['data'], 'tracelake'), dir);
  const { TraceStore } = (await import(resolve(args['store']))) as Mod;
  let steps: string[] = [];
  const store = await TraceStore.open(dir, { onPlan: (s) => (steps = [...s]) });
  const body = { log_stream_id: info.logStreamId };
  const count = () => store.count('span', info.projectId, body as never);
  return {
    args,
    store,
    projectId: info.projectId,
    logStreamId: info.logStreamId,
    steps: () => steps,
    async peerDelete(tag) {
      const filters = [
        { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' },
        { type: 'collection', column_id: 'tags', operator: 'contains', value: tag },
      ];
      const t0 = performance.now();
      const { deleted } = await store.records.delete('span', info.projectId, { ...body, filters } as never);
      return { deleted, ms: performance.now() - t0 };
    },
    async settleLists() {
      let settle = 0;
      for (; settle < 60; settle++) {
        await count();
        if (steps.some((s) => /\(0 made\)/.test(s))) break;
        await new Promise((r) => setTimeout(r, 500));
      }
      return settle;
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
