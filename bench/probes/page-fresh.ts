// Where a fresh metric-sorted page's time goes: the fresh matrix's two page questions (llm spans by
// metrics/correctness, with num_input_tokens gt x or model eq), each on its own store copy just opened,
// asked once fresh and once again; for each ask its time, the plan's steps and each statement's time.
//   node dist/bench/probes/page-fresh.js TEMPLATE_DIR [tokens=900] [model=gpt-4o] [question=both]
// TEMPLATE_DIR holds the fresh matrix's template (built.json and tracelake/); the copy goes to /tmp.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';
import { statementLine, watchStatements } from '../statement-times.js';
import { copyStore } from '../peers/store-template.js';

const [template, tokens = '900', model = 'gpt-4o', which = 'both'] = process.argv.slice(2);
if (!template) throw new Error('usage: page-fresh.js TEMPLATE_DIR [tokens] [model] [tokens|model|both]');
const info = JSON.parse(readFileSync(join(template, 'built.json'), 'utf8')) as { projectId: string; logStreamId: string };

let stmts: string[] = [];
watchStatements(({ text: full, params, ms }) => {
  const text = full.replace(/\s+/g, ' ');
  if (process.env['SQLFULL']) console.log(`FULL ${text} PARAMS ${JSON.stringify(params)}`);
  stmts.push(statementLine(text, ms));
});

const llm = { type: 'text', column_id: 'type', operator: 'eq', value: 'llm' };
const second = {
  tokens: { type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gt', value: Number(tokens) },
  model: { type: 'text', column_id: 'model', operator: 'eq', value: model },
};
for (const name of ['tokens', 'model'] as const) {
  if (which !== 'both' && which !== name) continue;
  const dir = mkdtempSync(join(tmpdir(), 'tracelake-pagefresh-'));
  try {
    copyStore(join(template, 'tracelake'), dir);
    let steps: readonly string[] = [];
    const store = await TraceStore.open(dir, { onPlan: (s) => (steps = s) });
    try {
      for (const ask of ['fresh', 'again']) {
        stmts = [];
        const t0 = performance.now();
        const page = await store.partialSearch('span', info.projectId, {
          log_stream_id: info.logStreamId,
          filters: [llm, second[name]],
          sort: { column_id: 'metrics/correctness', ascending: false },
          pagination: { starting_token: 0, limit: 100 },
          select_columns: { column_ids: ['id'] },
        } as never);
        const ms = performance.now() - t0;
        console.log(`${name} ${ask}: ${ms.toFixed(1)} ms, ${page.records.length} rows, steps ${JSON.stringify(steps)}`);
        for (const s of stmts) console.log(`  ${s}`);
      }
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
