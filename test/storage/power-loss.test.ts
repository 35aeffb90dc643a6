// Power loss, as modelled by test/support/fs-recorder.ts: after a cut, folders hold the entries of
// their last fsync and files the bytes of their last fsync, nothing else. A writer drives a real
// TraceStore (reliable and unreliable ingest, updates, re-logs, deletes, seals, merges, run and
// project drops, catalog changes) while every fsync is journaled; for many cut points the image the
// cut leaves is opened and checked against what was acknowledged before it (power-model.ts):
// everything acknowledged with reliable:true is there (that version or a later one sent), nothing
// deleted comes back, nothing is duplicated, acknowledged catalog changes are there, and the store
// opens and takes a durable write.
//
// CI runs a fixed seed and a bounded sample of cuts; TRACELAKE_POWER_SEED, TRACELAKE_POWER_OPS and
// TRACELAKE_POWER_CUTS (a number, or "all") make longer runs (docs/hostile-testing.md).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../support/helpers.js';
import { PowerJournal } from '../support/power-image.js';
import { PowerModel, type AckLine } from '../support/power-model.js';
import { nodeEntry } from '../support/node-entry.js';

const SEED = Number(process.env['TRACELAKE_POWER_SEED'] ?? 7);
const OPS = Number(process.env['TRACELAKE_POWER_OPS'] ?? 60);
const CUTS = process.env['TRACELAKE_POWER_CUTS'] ?? '40';
/** Longer runs (any of the variables set) get an hour. */
const LONG = ['TRACELAKE_POWER_SEED', 'TRACELAKE_POWER_OPS', 'TRACELAKE_POWER_CUTS'].some((v) => process.env[v] !== undefined);

interface Run {
  journal: PowerJournal;
  model: PowerModel;
  lines: AckLine[];
}

function record(scenario: string, seed: number, ops: number): Run {
  const base = tempDir();
  const journalDir = join(base, 'journal');
  const data = join(base, 'data');
  const r = spawnSync(
    process.execPath,
    [...nodeEntry('test/support/power-workload.ts'), journalDir, data, scenario, String(seed), String(ops)],
    { encoding: 'utf8', timeout: 90_000 },
  );
  assert.equal(r.status, 0, `the writer failed: ${r.stderr}`);
  const raw = readFileSync(join(journalDir, 'acks.ndjson'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const root = (raw.shift() as { root: string }).root;
  const lines = raw as AckLine[];
  return { journal: PowerJournal.load(journalDir, root), model: new PowerModel(lines), lines };
}

/** Cut points: every event when `want` covers them, else an even spread ending at the last event. */
function cuts(total: number, want: string): number[] {
  if (want === 'all' || Number(want) >= total) return Array.from({ length: total + 1 }, (_, i) => i);
  const n = Number(want);
  const out = new Set<number>();
  for (let i = 1; i <= n; i++) out.add(Math.round((i * total) / n));
  return [...out];
}

async function checkCuts(run: Run, points: readonly number[]): Promise<string[]> {
  const failures: string[] = [];
  const image = join(tempDir(), 'image');
  for (const k of points) {
    // LOCK is the folder lock's business (a pid file, replaced elsewhere): not part of this model.
    run.journal.build(k, image, (name) => name === 'LOCK');
    for (const p of await run.model.check(image, k)) {
      failures.push(`cut after event ${k}: ${p}`);
      if (LONG) console.log(failures[failures.length - 1]);
    }
  }
  return failures;
}

test('power loss at many cut points of a mixed workload loses nothing acknowledged and resurrects nothing', {
  timeout: LONG ? 3_600_000 : 240_000,
}, async () => {
  const run = record('mixed', SEED, OPS);
  const total = run.journal.events.length;
  const points = cuts(total, CUTS);
  const failures = await checkCuts(run, points);
  const kinds = new Map<string, number>();
  for (const l of run.lines) {
    const k = l.kind === 'put' ? (l.reliable ? 'reliable put' : 'unreliable put') : l.kind;
    kinds.set(k, (kinds.get(k) ?? 0) + 1);
  }
  console.log(
    `power loss: seed ${SEED}, ${OPS} operations (${[...kinds].map(([k, n]) => `${k} ${n}`).join(', ')}), ` +
      `${total} fsync events, ${points.length} cut points checked, ${failures.length} failures`,
  );
  assert.deepEqual(failures.slice(0, 20), []);
});

test('review reproduction 2: a sealed record updated with reliable:false, then merged, survives a power cut in its acknowledged version', {
  timeout: 120_000,
}, async () => {
  const run = record('dead-before-wal', 1, 0);
  const total = run.journal.events.length;
  // The cuts after the merge commits are the ones that matter; check every cut from the update on.
  const update = run.lines.find((l) => l.kind === 'put' && l.reliable === false)!;
  const points = cuts(total, 'all').filter((k) => k >= update.sent);
  const failures = await checkCuts(run, points);
  assert.ok(points.length > 0);
  assert.deepEqual(failures, []);
});

test('a seal retried after a failure keeps a version replaced from a newer log file that never reached disk', {
  timeout: 120_000,
}, async () => {
  const run = record('seal-after-failure', 5, 0);
  const points = cuts(run.journal.events.length, 'all');
  assert.deepEqual(await checkCuts(run, points), []);
});

test('power loss at every cut of a direct import (and the writes and re-import after it) keeps all of a commit or none', {
  timeout: 180_000,
}, async () => {
  const run = record('import', 3, 0);
  const first = run.lines.find((l) => l.kind === 'put' && l.ids?.length === 5)!;
  const points = cuts(run.journal.events.length, 'all').filter((k) => k >= first.sent);
  assert.ok(points.length > 10);
  assert.deepEqual(await checkCuts(run, points), []);
});
