// Waiting for background work (a merge, a cleanup, a file going) in tests: the condition is polled
// until it holds or the limit passes, then the test fails saying what it waited for. A fixed sleep
// before an assertion passes by luck on a quiet machine and fails on a loaded one; a limit only
// bounds how long a real failure takes to show.
import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitOptions {
  /** Give up after this long (default 30 s: generous, it only decides how long a failure takes). */
  limitMs?: number;
  /** Between two looks (default 20 ms). */
  everyMs?: number;
  /** What is waited for, for the failure message. */
  what?: string;
}

/**
 * Resolves with the condition's first truthy value; throws once `limitMs` has passed without one. A
 * string from the condition is not truthy enough: it is kept as the latest state for the message.
 */
export async function waitFor<T>(
  cond: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<Exclude<T, false | null | undefined | 0 | '' | string>> {
  const { limitMs = 30_000, everyMs = 20, what = 'the condition' } = options;
  const end = Date.now() + limitMs;
  let last: unknown;
  for (;;) {
    last = await cond();
    if (last && typeof last !== 'string') return last as Exclude<T, false | null | undefined | 0 | '' | string>;
    if (Date.now() >= end) break;
    await sleep(everyMs);
  }
  throw new Error(`waited ${limitMs} ms for ${what}${typeof last === 'string' ? `: ${last}` : ''}`);
}
