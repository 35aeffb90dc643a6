// Guarantees: counts that reuse each segment's kept count answer exactly what a count reading every
// row does (a store with segmentCounts: false), asked again and again, across deletes (segments with
// dead rows), childless marks under a has_children filter, merges (which also purge expired rows),
// retention that cuts a segment partly, and rows in memory; and a repeated count does reuse the kept counts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateBatches } from '../../support/generator.js';
import { internalsOf } from '../../../src/engine/internals.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { openStore, type StoreFixture } from '../../support/helpers.js';

const DAY = 86_400_000;

test('kept segment counts give the full count after deletes, merges and retention', { timeout: 120_000 }, async (t) => {
  const steps: string[][] = [];
  const kept = await openStore(t, { autoCompact: false, segmentCountMinRows: 1, onPlan: (s) => steps.push([...s]) });
  const plain = await openStore(t, { autoCompact: false, segmentCounts: false });
  const now = Date.now();
  // Old traces (3 days) and recent ones (an hour) share the first segment, so a 2-day retention cuts
  // it partly and leaves the second whole; the last batch stays in memory.
  const set = (seed: number, startTime: number, spans: number) => [...generateBatches({ spans, batchSpans: 500, seed, startTime })];
  const parts = [
    [...set(5, now - 3 * DAY, 1500), ...set(6, now - 3_600_000, 1500)],
    set(7, now - 1_800_000, 1500),
    set(8, now - 600_000, 500),
  ];
  for (const fx of [kept, plain]) {
    for (const [i, batches] of parts.entries()) {
      for (const b of batches) await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
      if (i < parts.length - 1) await fx.store.flush();
    }
  }
  const filters: unknown[][] = [
    [],
    [{ type: 'text', column_id: 'input', operator: 'contains', value: 'warranty', case_sensitive: false }],
    [{ type: 'text', column_id: 'type', operator: 'eq', value: 'llm' }],
    [{ type: 'collection', column_id: 'tags', operator: 'contains', value: 'beta' }],
    [{ type: 'number', column_id: 'metrics/num_input_tokens', operator: 'gt', value: 150 }],
    [{ type: 'boolean', column_id: 'has_children', operator: 'eq', value: false }],
  ];
  const count = (fx: StoreFixture, level: 'span' | 'trace', f: unknown[]) =>
    fx.store.count(level, fx.projectId, { log_stream_id: fx.logStreamId, filters: f } as never).then((r) => r.total_count);
  let reused = 0;
  const check = async (when: string) => {
    for (const level of ['span', 'trace'] as const) {
      for (const f of filters) {
        if (level === 'trace' && f.length > 0 && (f[0] as { column_id: string }).column_id !== 'input') continue;
        const want = await count(plain, level, f);
        for (let ask = 0; ask < 2; ask++) {
          steps.length = 0;
          assert.equal(await count(kept, level, f), want, `${when}: ${level} ${JSON.stringify(f)} ask ${ask}`);
          if (ask === 1 && / counts kept\)$/.test(steps[0]![0]!) && !/^count \(0 of/.test(steps[0]![0]!)) reused++;
        }
      }
    }
  };
  await check('fresh');
  assert.ok(reused >= 6, `repeated counts reused kept segment counts (${reused})`);
  // Counts of every segment are kept now; retention then hides part of the first one.
  for (const fx of [kept, plain]) fx.store.data.setRetention(fx.projectId, { retention_days: 2 });
  await check('with retention cutting a segment');
  assert.ok((await count(plain, 'span', [])) < 5000, 'retention hid the old spans');
  for (const fx of [kept, plain]) {
    const body = {
      log_stream_id: fx.logStreamId,
      filters: [
        { type: 'collection', column_id: 'tags', operator: 'contains', value: 'beta' },
        { type: 'text', column_id: 'type', operator: 'eq', value: 'tool' },
      ],
    };
    const gone = await fx.store.records.delete('span', fx.projectId, body as never);
    assert.ok(gone.deleted > 0);
  }
  await check('after a delete');
  for (const fx of [kept, plain]) {
    await fx.store.flush();
    await fx.store.maintenance.compact();
  }
  await check('after seal and merge');
});

// A trace whose only span is deleted gets a childless mark, not a dead row: its trace segment stays
// dead-free, so a kept count of a has_children filter would still count it.
test('a has_children filter is counted afresh after a delete leaves a trace childless', async (t) => {
  const kept = await openStore(t, { autoCompact: false, segmentCountMinRows: 1 });
  const plain = await openStore(t, { autoCompact: false, segmentCounts: false });
  const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const traces = [1, 2].map((i) => ({
    id: id(i),
    name: `t${i}`,
    input: 'q',
    created_at: '2026-01-01T00:00:00Z',
    spans: [{ id: id(10 + i), type: 'llm', name: `s${i}`, input: 'x', created_at: '2026-01-01T00:00:01Z', model: 'm' }],
  }));
  const filters = [{ type: 'boolean', column_id: 'has_children', operator: 'eq', value: true }];
  const counts = async () => {
    const out: number[] = [];
    for (const fx of [kept, plain])
      out.push((await fx.store.count('trace', fx.projectId, { log_stream_id: fx.logStreamId, filters } as never)).total_count);
    return out;
  };
  for (const fx of [kept, plain]) {
    await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces } as never);
    await fx.store.flush();
  }
  assert.deepEqual(await counts(), [2, 2]);
  assert.deepEqual(await counts(), [2, 2]);
  for (const fx of [kept, plain]) {
    const gone = await fx.store.records.delete('span', fx.projectId, {
      log_stream_id: fx.logStreamId,
      filters: [{ type: 'text', column_id: 'name', operator: 'eq', value: 's1' }],
    } as never);
    assert.equal(gone.deleted, 1);
  }
  assert.deepEqual(await counts(), [1, 1]);
});

// After a delete spread over every segment, counts asked again (nothing logged between) reuse the
// kept counts of the dirty segments too, and a count without a filter reads no segment at all (their
// dead-row lists, made once, saved for the next open); a later delete or a merge changes both.
test('counts after a delete spread over every segment reuse kept counts and dead-row lists', { timeout: 120_000 }, async (t) => {
  const steps: string[][] = [];
  const kept = await openStore(t, { autoCompact: false, segmentCountMinRows: 1, onPlan: (s) => steps.push([...s]) });
  const plain = await openStore(t, { autoCompact: false, segmentCounts: false });
  const now = Date.now();
  for (const fx of [kept, plain]) {
    for (const seed of [11, 12, 13]) {
      for (const b of generateBatches({ spans: 800, batchSpans: 400, seed, startTime: now - 3_600_000 }))
        await fx.store.logTraces(fx.projectId, { log_stream_id: fx.logStreamId, traces: b as never });
      await fx.store.flush();
    }
  }
  const count = (fx: StoreFixture, f: unknown[]) =>
    fx.store.count('span', fx.projectId, { log_stream_id: fx.logStreamId, filters: f } as never).then((r) => r.total_count);
  const filters: unknown[][] = [[], [{ type: 'text', column_id: 'type', operator: 'eq', value: 'tool' }]];
  const del = async (value: string) => {
    for (const fx of [kept, plain]) {
      const body = {
        log_stream_id: fx.logStreamId,
        filters: [
          { type: 'text', column_id: 'type', operator: 'eq', value: 'tool' },
          { type: 'collection', column_id: 'tags', operator: 'contains', value },
        ],
      };
      assert.ok((await fx.store.records.delete('span', fx.projectId, body as never)).deleted > 0, `delete of ${value}`);
    }
  };
  /** Asks each count twice; returns the dead-row lists made by each ask of the count without a filter. */
  const check = async (when: string, dirty: boolean) => {
    const made: number[] = [];
    for (const f of filters) {
      const want = await count(plain, f);
      for (let ask = 0; ask < 2; ask++) {
        steps.length = 0;
        assert.equal(await count(kept, f), want, `${when}: ${JSON.stringify(f)} ask ${ask}`);
        const m = /^count \((\d+) of (\d+) segment counts kept\)$/.exec(steps[0]?.[0] ?? '');
        assert.ok(m, `${when}: counted by segment (${steps[0]})`);
        const lists = /^(\d+) segments counted from their dead-row lists \((\d+) made\)$/.exec(steps[0]?.[1] ?? '');
        if (f.length === 0 && dirty) {
          assert.ok(lists && Number(lists[1]) === Number(m[2]) && Number(m[2]) >= 3, `${when}: every segment from its list (${steps[0]})`);
          made.push(Number(lists[2]));
        } else if (ask === 1) assert.ok(m[1] === m[2] && Number(m[1]) >= 3, `${when}: every segment count reused (${steps[0]})`);
      }
    }
    return made;
  };
  assert.deepEqual(await check('fresh', false), []);
  await del('beta');
  const dirtySegments = () => {
    const snap = internalsOf(kept.store).records.snapshot();
    const all = snap.segmentsFor({ projectId: kept.projectId, runId: kept.logStreamId, kinds: ['span'] });
    const dirty = all.filter((s) => !snap.deadFreeFiles().has(s.file));
    snap.release();
    return { all: all.length, dirty: dirty.length };
  };
  const spread = dirtySegments();
  assert.ok(spread.dirty >= 3 && spread.dirty === spread.all, `every span segment has dead rows (${JSON.stringify(spread)})`);
  const first = await check('after a delete', true);
  assert.ok(first[0]! >= 3 && first[1] === 0, `lists made once, then reused (${first})`);
  await del('prod');
  const second = await check('after a second delete', true);
  assert.ok(second[0]! >= 1 && second[1] === 0, `lists of segments marked again made again (${second})`);
  // Reopened: the lists saved beside the manifest still hold, so none is made again.
  await kept.store.close();
  Object.assign(kept, {
    store: await TraceStore.open(kept.dir, { autoCompact: false, segmentCountMinRows: 1, onPlan: (s) => steps.push([...s]) }),
  });
  t.after(() => kept.store.close());
  assert.deepEqual(await check('reopened', true), [0, 0]);
  for (const fx of [kept, plain]) await fx.store.maintenance.compact();
  const merged = dirtySegments();
  await check(`after a merge (${JSON.stringify(merged)})`, merged.dirty > 0 && merged.dirty === merged.all);
});
