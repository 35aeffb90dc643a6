// The first writable open of a folder written by an older version (no child index files `.kids` and
// `.kidrows`): open and first count, each in a process of its own, on a fresh copy of a settled
// template (Parquet and id files hard-linked, the rest copied) with those files removed. Then, where
// the build has them (this one), the wait for the indexes' rebuild after the open. With --base, a
// second checkout (its dist/ compiled) takes turns with this one. --intact: the files are left (a
// folder of this version). --delete: the peer benchmark's 1% delete right after the first count.
//   node --import tsx bench/probes/open-older.ts <template dir holding built.json> [--base <checkout>] [--turns 3] [--intact] [--delete]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { copyStore } from '../peers/store-template.js';
import { QUESTIONS } from '../workload.js';

const args = process.argv.slice(2);
const built = (template: string) =>
  JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };

if (args[0] === 'child') {
  const [, root, template, dir] = args as [string, string, string, string];
  const { TraceStore } = (await import(
    pathToFileURL(join(root, 'dist/src/engine/trace-store.js')).href
  )) as typeof import('../../src/engine/trace-store.js');
  const b = built(template);
  const t0 = performance.now();
  const store = await TraceStore.open(dir, { autoCompact: false });
  const open = performance.now() - t0;
  const n = (await store.count('span', b.projectId, { log_stream_id: b.logStreamId })).total_count;
  const first = performance.now() - t0;
  let deleteMs: number | null = null;
  if (args.includes('--delete')) {
    const q = QUESTIONS.find((x) => x.api(x.variants[0]!).op === 'delete')!;
    const call = q.api(q.variants[0]!);
    const t = performance.now();
    await store.records.delete('span', b.projectId, { ...call.body, log_stream_id: b.logStreamId } as never);
    deleteMs = Math.round(performance.now() - t);
  }
  // This build rebuilds after the open; an older one did in it (nothing to wait for).
  const m = store.maintenance as unknown as { indexesRepaired?: () => Promise<number> };
  const rebuilt = m.indexesRepaired ? await m.indexesRepaired() : null;
  const repaired = performance.now() - t0;
  const t1 = performance.now();
  await store.close();
  console.log(
    JSON.stringify({
      open_ms: Math.round(open),
      first_answer_ms: Math.round(first),
      delete_ms: deleteMs,
      repaired_ms: rebuilt === null ? null : Math.round(repaired),
      rebuilt,
      close_ms: Math.round(performance.now() - t1),
      spans: n,
    }),
  );
} else {
  const template = resolve(args[0]!);
  const at = (flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);
  const turns = Number(at('--turns') ?? 3);
  const sides: [string, string][] = [['new', resolve(dirname(new URL(import.meta.url).pathname), '../..')]];
  const base = at('--base');
  if (base) sides.unshift(['base', resolve(base)]);
  const strip = (d: string): number => {
    let n = 0;
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) n += strip(p);
      else if (/\.(kids|kidrows)$/.test(e.name)) {
        rmSync(p);
        n++;
      }
    }
    return n;
  };
  for (let turn = 0; turn < turns; turn++) {
    for (const [name, root] of sides) {
      const work = mkdtempSync(join('/tmp', 'openbg-older-'));
      try {
        const dir = join(work, 'tracelake');
        copyStore(join(template, 'tracelake'), dir);
        const removed = args.includes('--intact') ? 0 : strip(join(dir, 'records'));
        const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
        const r = spawnSync(
          process.execPath,
          [...process.execArgv, new URL(import.meta.url).pathname, 'child', root, template, dir, ...args.filter((a) => a === '--delete')],
          {
            encoding: 'utf8',
          },
        );
        process.stdout.write(
          `${name} turn ${turn} removed ${removed} load ${load}: ${r.stdout.trim()}${r.stderr ? ` ${r.stderr.trim()}` : ''}\n`,
        );
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }
  }
}
