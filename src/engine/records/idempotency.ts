// Idempotency keys of logging requests (the `Idempotency-Key` header, the library's `idempotencyKey`
// option). Within the window a retry with the same key gets the first attempt's answer (waiting for it
// while it still runs) and logs nothing; the same key with another body is refused. Past the window,
// or after a restart, the key still seeds the request's minted ids (ingest/ids.ts), so a retry finds
// its records already logged (Ingest checks) instead of adding a second copy.
import { invalid } from '../../errors.js';
import { contentDigest } from '../../ingest/ids.js';

/** How long a key's first answer is kept in memory (documented in docs/logging-semantics.md). */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Most keys remembered at once; the oldest are forgotten first (their ids still protect a retry). */
const MAX_KEYS = 100_000;
/** Printable ASCII, as HTTP header values carry it; long enough for a UUID, a hash or a composite key. */
const KEY_SHAPE = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

export interface LogOptions {
  /**
   * Makes a retry of this request safe: the same key (with the same body, in the same project) within
   * 24 hours answers what the first attempt answered and logs nothing again; later, or after a restart,
   * it finds the records the first attempt logged. Printable ASCII, 1 to 255 characters.
   */
  idempotencyKey?: string;
}

interface Entry {
  readonly digest: string;
  readonly at: number;
  readonly answer: Promise<unknown>;
}

/** Checks a key's shape; `loc` names it (the header, or the library option) in the 422. */
export function checkedKey(key: unknown, loc: (string | number)[]): string | null {
  if (key === undefined || key === null) return null;
  if (typeof key !== 'string' || !KEY_SHAPE.test(key))
    throw invalid(loc, 'Input should be 1 to 255 printable ASCII characters, not starting with a space', key, 'string_pattern_mismatch');
  return key;
}

export class IdempotencyKeys {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /**
   * Runs `fn` for the first request with `key` in `scope` (route and project), or answers what it
   * answered. A failed first attempt is forgotten, so its retry runs again.
   */
  run<T>(scope: string, key: string, body: unknown, loc: (string | number)[], fn: () => Promise<T>): Promise<T> {
    const id = `${scope}\u0000${key}`;
    const now = this.#now();
    this.#forgetOld(now);
    const digest = contentDigest(body);
    const known = this.#entries.get(id);
    if (known) {
      if (known.digest !== digest) throw invalid(loc, 'this Idempotency-Key was already used with a different request body', key);
      return known.answer as Promise<T>;
    }
    const answer = fn();
    this.#entries.set(id, { digest, at: now, answer });
    answer.catch(() => {
      if (this.#entries.get(id)?.answer === answer) this.#entries.delete(id);
    });
    return answer;
  }

  /** Keys kept now (tests). */
  get size(): number {
    return this.#entries.size;
  }

  #forgetOld(now: number): void {
    // Entries are in insertion order, which is time order.
    for (const [id, e] of this.#entries) {
      if (now - e.at < IDEMPOTENCY_WINDOW_MS && this.#entries.size < MAX_KEYS) break;
      this.#entries.delete(id);
    }
  }
}
