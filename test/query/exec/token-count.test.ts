// Guarantees: counts answered from the token index (src/query/exec/token-count.ts) equal those of a store
// without any text index (reading every row), for case-insensitive needles of letters and digits on
// input, output and name, one leaf or an AND of them, at span and trace level, with rows in memory,
// across retention cutting a segment partly, deletes, records logged again with the same ids (a
// changed version and a plain retry), seals and merges, and a reopen after index files went missing
// or were damaged (rebuilt after open); and the token index does answer those counts.
import assert from 'node:assert/strict';
import { readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TraceStore } from '../../../src/engine/trace-store.js';
import type { TraceStoreOptions } from '../../../src/engine/store-options.js';
import { generateBatches } from '../../support/generator.js';
import { openStore, type StoreFixture } from '../../support/helpers.js';
import { tokenPostings } from '../../support/token-postings.js';

const DAY = 86_400_000;
const FRAGMENTS = [
  'warranty',
  'WARRANTY',
  'Warranty',
  'no-warranty',
  'war ranty',
  '\u212Aiwi',
  'KİWİ',
  'kıwı',
  '{"q":"\\nwarranty"}',
  'warrantyé',
  'a\u0080kiwi',
  '42',
  'ticket',
  ' ',
];

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

function odd(i: number, salt: number, at: number): Record<string, unknown> {
  let x = (i * 2654435761 + salt) >>> 0;
  const text = () => {
    let s = '';
    for (let k = 0; k < 4; k++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      s += FRAGMENTS[(x >>> 8) % FRAGMENTS.length];
    }
    return s;
  };
  const created = new Date(at + i * 1000).toISOString();
  return {
    id: id(i),
    name: text(),
    input: text(),
    output: text(),
    created_at: created,
    spans: [{ id: id(100_000 + i), type: 'tool', name: text(), input: text(), output: text(), created_at: created }],
  };
}

const leaf = (column_id: string, value: string) => ({ type: 'text', column_id, operator: 'contains', value, case_sensitive: false });
const FILTERS: unknown[][] = [
  [leaf('input', 'warranty')],
  [leaf('input', 'WARRANTY')],
  [leaf('input', 'kiwi')],
  [leaf('input', 'k')],
  [leaf('output', 'ticket')],
  [leaf('name', 'i')],
  [leaf('input', 'warranty'), leaf('output', '42')],
  [leaf('input', 'nosuchword')],
];

test('token index counts equal full reads across retention, deletes, re-logged ids, merges and a rebuild', {
  timeout: 180_000,
}, async (t) => {
  const steps: string[][] = [];
  const opts: TraceStoreOptions = { autoCompact: false, textIndex: true, rowGroupSize: 2048, onPlan: (s) => steps.push([...s]) };
  let indexed = await openStore(t, opts);
  const plain = await openStore(t, { autoCompact: false, segmentCounts: false });
  const now = Date.now();
  const set = (seed: number, startTime: number, spans: number) => [...generateBatches({ spans, batchSpans: 500, seed, startTime })];
  // Old and recent traces share the first segment (a 2-day retention cuts it partly); the last part stays in memory.
  const parts = [
    [...set(5, now - 3 * DAY, 1500), ...set(6, now - 3_600_000, 1500)],
    set(7, now - 1_800_000, 1500),
    set(8, now - 600_000, 500),
  ];
  const oddOnes = (from: number, n: number, salt: number, at: number) => Array.from({ length: n }, (_, k) => odd(from + k, salt, at));
  for (const fx of [indexed, plain]) {
    for (const [i, batches] of parts.entries()) {
      for (const b of batches) await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
      await fx.store.logTraces(fx.projectId, {
        log_stream_id: fx.logStreamId,
        traces: oddOnes(i * 400, 400, 0, i === 0 ? now - 3 * DAY : now - 600_000),
      } as never);
      if (i < parts.length - 1) await fx.store.flush();
    }
  }
  const count = (fx: StoreFixture, level: 'span' | 'trace', f: unknown[]) =>
    fx.store.count(level, fx.projectId, { log_stream_id: fx.logStreamId, filters: f } as never).then((r) => r.total_count);
  let byTokens = 0;
  const check = async (when: string) => {
    for (const level of ['span', 'trace'] as const) {
      for (const f of FILTERS) {
        const want = await count(plain, level, f);
        steps.length = 0;
        assert.equal(await count(indexed, level, f), want, `${when}: ${level} ${JSON.stringify(f)}`);
        if (/token index/.test(steps[0]?.[0] ?? '')) byTokens++;
      }
    }
  };
  await check('fresh');
  assert.ok(byTokens >= FILTERS.length * 2, `the token index answered (${byTokens})`);
  assert.ok((await count(plain, 'span', [leaf('input', 'kiwi')])) > 50, 'the odd needles match');

  for (const fx of [indexed, plain]) fx.store.data.setRetention(fx.projectId, { retention_days: 2 });
  await check('with retention cutting a segment');
  for (const fx of [indexed, plain]) {
    const gone = await fx.store.records.delete('span', fx.projectId, {
      log_stream_id: fx.logStreamId,
      filters: [leaf('output', 'ticket'), { type: 'text', column_id: 'type', operator: 'eq', value: 'tool' }],
    } as never);
    assert.ok(gone.deleted > 0);
  }
  await check('after a delete');
  // The same ids again: sealed odd traces 400-599 in a changed version, 600-699 as a plain retry.
  for (const fx of [indexed, plain]) {
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: oddOnes(400, 200, 7, now - 600_000) } as never);
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: oddOnes(600, 100, 0, now - 600_000) } as never);
  }
  await check('after re-logging ids');
  for (const fx of [indexed, plain]) {
    await fx.store.flush();
    await fx.store.maintenance.compact();
  }
  await check('after seal and merge');

  // Index files lost or damaged (a crash, a disk): rebuilt after open, answers unchanged.
  await indexed.store.close();
  const toks: string[] = [];
  const walk = (d: string) =>
    readdirSync(d, { withFileTypes: true }).forEach((e) => {
      e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.tok') && toks.push(join(d, e.name));
    });
  walk(join(indexed.dir, 'records'));
  assert.ok(toks.length >= 2, `token indexes on disk (${toks.length})`);
  const before = toks.map((f) => readFileSync(f));
  const postingsBefore = toks.map(tokenPostings);
  rmSync(toks[0]!);
  writeFileSync(toks[1]!, before[1]!.subarray(0, before[1]!.length >> 1));
  if (toks[2]) {
    const flipped = Buffer.from(before[2]!);
    flipped[flipped.length - 9]! ^= 0x04;
    writeFileSync(toks[2], flipped);
  }
  const store = await TraceStore.open(indexed.dir, opts);
  t.after(() => store.close());
  await store.maintenance.indexesRepaired();
  indexed = { ...indexed, store };
  // A merged segment's index was made from its inputs': rebuilt from the text, the same postings
  // (its dictionary may list them in another order).
  toks.forEach((f, i) => {
    assert.deepEqual(tokenPostings(f), postingsBefore[i], `${f}: rebuilt with the postings written`);
  });
  byTokens = 0;
  await check('after a rebuild');
  assert.ok(byTokens >= FILTERS.length * 2, `the token index answered after the rebuild (${byTokens})`);
});
