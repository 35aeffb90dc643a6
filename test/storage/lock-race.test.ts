// Guarantee: two writers on one data folder are impossible. 2, 3 and 4 processes try to take the lock of
// one folder at the same instant, over and over; in no trial do two of them hold it at once. Half of
// the trials race on a fresh folder (the lock file does not exist yet), half on a folder that holds a
// stale pid LOCK file of an earlier version naming a dead process.
// TRACELAKE_LOCK_TRIALS sets the two-process trial count (default 150; 3 and 4 processes get a third
// each); docs/hostile-testing.md has a longer run.
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../support/helpers.js';
import { entryExecArgv, nodeEntry } from '../support/node-entry.js';

const TRIALS = Number(process.env['TRACELAKE_LOCK_TRIALS'] ?? 150);
const HOLD_MS = 8;
/** Bounds each test; a longer run (a larger TRACELAKE_LOCK_TRIALS) gets proportionally longer. */
const TIMEOUT_MS = Math.max(120_000, TRIALS * 400);
/** A pid no process has: above the kernel's pid_max limit (4194304), so it is never alive. */
const DEAD_PID = 4_194_305;

interface Outcome {
  pid: number;
  won: boolean;
  overlap?: boolean;
  code?: string;
  message?: string;
}

async function contenders(n: number): Promise<ChildProcess[]> {
  const children = Array.from({ length: n }, () =>
    fork(nodeEntry('test/support/lock-contender.ts').at(-1)!, [], {
      execArgv: entryExecArgv(),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  await Promise.all(
    children.map(
      (c) =>
        new Promise((resolve, reject) => {
          c.once('message', resolve);
          c.once('exit', (code) => reject(new Error(`contender exited with ${code} before it was ready`)));
        }),
    ),
  );
  return children;
}

function attempt(child: ChildProcess, trial: { dir: string; at: number; holdMs: number }): Promise<Outcome> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as Outcome));
    child.send(trial);
  });
}

async function race(n: number, trials: number): Promise<void> {
  const root = tempDir(undefined, `tracelake-lock-race${n}-`);
  const children = await contenders(n);
  const tally = { one: 0, sequential: 0 };
  const failures: string[] = [];
  try {
    for (let i = 0; i < trials; i++) {
      const dir = join(root, String(i));
      mkdirSync(dir);
      if (i % 2 === 1) writeFileSync(join(dir, 'LOCK'), String(DEAD_PID));
      const at = performance.timeOrigin + performance.now() + 15;
      const outcomes = await Promise.all(children.map((c) => attempt(c, { dir, at, holdMs: HOLD_MS })));
      const winners = outcomes.filter((o) => o.won);
      for (const o of outcomes) {
        if (o.overlap) failures.push(`trial ${i}: process ${o.pid} held the lock while another did`);
        if (!o.won && o.code !== 'STORE_LOCKED') failures.push(`trial ${i}: process ${o.pid} failed with ${o.code}: ${o.message}`);
      }
      if (winners.length === 0) failures.push(`trial ${i}: nobody got the lock`);
      if (winners.length === 1) tally.one++;
      else tally.sequential++; // a contender that came after the first holder released: allowed, never overlapping
    }
  } finally {
    for (const c of children) c.disconnect();
  }
  assert.deepEqual(failures.slice(0, 10), [], `${new Set(failures.map((f) => f.split(':')[0])).size} of ${trials} trials failed`);
  console.log(
    `# ${n} processes, ${trials} trials: one holder in ${tally.one}, holders one after another in ${tally.sequential}, never two at once`,
  );
}

test('two processes started at one instant never both hold the lock', { timeout: TIMEOUT_MS }, async () => {
  await race(2, TRIALS);
});

test('three and four processes started at one instant never hold the lock together', { timeout: TIMEOUT_MS }, async () => {
  await race(3, Math.ceil(TRIALS / 3));
  await race(4, Math.ceil(TRIALS / 3));
});
