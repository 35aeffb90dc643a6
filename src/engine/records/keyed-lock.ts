// Mutual exclusion per key (the ingest path locks the traces a request reads and rewrites).

/**
 * Mutual exclusion per key: run(keys, fn) waits until none of its keys is held, then holds them all
 * while fn runs (taken at once, so two callers never wait on each other). Uncontended, it costs a few
 * map operations.
 */
export class KeyedLock {
  readonly #held = new Map<string, Promise<void>>();

  async run<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    for (;;) {
      const busy: Promise<void>[] = [];
      for (const k of keys) {
        const p = this.#held.get(k);
        if (p) busy.push(p);
      }
      if (busy.length === 0) break;
      await Promise.all(busy);
    }
    let release!: () => void;
    const done = new Promise<void>((r) => (release = r));
    for (const k of keys) this.#held.set(k, done);
    try {
      return await fn();
    } finally {
      for (const k of keys) if (this.#held.get(k) === done) this.#held.delete(k);
      release();
    }
  }
}
