// At most n tasks at once; the others wait their turn in order.
export class Limiter {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(n: number) {
    this.#free = Math.max(1, n);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free === 0) await new Promise<void>((r) => this.#waiting.push(r));
    else this.#free--;
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
