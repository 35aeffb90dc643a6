// Where a fresh count's time goes: the fresh matrix's three-leaf count (model eq AND
// metrics/correctness gt x AND tags contains) on a store copy just opened, asked once fresh and once
// again with other parameters; for each ask its time, the plan's steps and each statement's time.
//   node dist/bench/probes/count-fresh.js TEMPLATE_DIR [quality=0.41] [model=gpt-4o] [tag=rag]
// TEMPLATE_DIR holds the fresh matrix's template (built.json and tracelake/); the copy goes to /tmp.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';
import { statementLine, watchStatements } from '../statement-times.js';
import { copyStore } from '../peers/store-template.js';
import { profileTop } from './profile-top.js';

const [template, quality = '0.41', model = 'gpt-4o', tag = 'rag'] = process.argv.slice(2);
if (!template) throw new Error('usage: count-fresh.js TEMPLATE_DIR [quality] [model] [tag]');
const info = JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };

let stmts: string[] = [];
watchStatements(({ text, ms }) => stmts.push(statementLine(text, ms)));

const dir = mkdtempSync(join(tmpdir(), 'tracelake-countfresh-'));
try {
  copyStore(join(template, 'tracelake'), dir);
  let steps: readonly string[] = [];
  const t = performance.now();
  const store = await TraceStore.open(dir, { onPlan: (s) => (steps = s) });
  console.log(`opened in ${(performance.now() - t).toFixed(0)} ms`);
  try {
    for (const [ask, q] of [
      ['fresh', Number(quality)],
      ['again', Number(quality) + 0.013],
    ] as const) {
      stmts = [];
      const t0 = performance.now();
      const stop = process.env['PROF'] && ask === 'fresh' ? await profileTop() : null;
      const n = await store.count('span', info.projectId, {
        log_stream_id: info.logStreamId,
        filters: [
          { type: 'text', column_id: 'model', operator: 'eq', value: model },
          { type: 'number', column_id: 'metrics/correctness', operator: 'gt', value: q },
          { type: 'collection', column_id: 'tags', operator: 'contains', value: tag },
        ],
      } as never);
      const ms = performance.now() - t0;
      if (stop) console.log(await stop());
      console.log(`${ask}: ${ms.toFixed(1)} ms, count ${JSON.stringify(n)}, steps ${JSON.stringify(steps)}`);
      for (const s of stmts) console.log(`  ${s}`);
    }
  } finally {
    await store.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
