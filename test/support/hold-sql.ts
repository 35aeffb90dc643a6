// Holds the first statement a `run` method (or `all`, with `method: 'all'`) receives that matches, so
// a test can act while a write stands at that point. DuckDB and the files stay real; only the timing
// is the test's. `after` holds once the statement has run instead of before it.
import type { TestContext } from 'node:test';
import { compile, type Sql } from '../../src/query/sql.js';

type Run = (q: Sql) => Promise<unknown>;

export interface Hold {
  /** Resolves when the matching statement is held. */
  readonly reached: Promise<void>;
  /** Lets it go on. */
  release(): void;
  /** Puts the original method back (also done after the test). */
  restore(): void;
}

export function holdSql(
  t: TestContext,
  proto: { run: Run } | { all: Run },
  matches: (sql: string, params: readonly unknown[]) => boolean,
  options: { after?: boolean; method?: 'run' | 'all' } = {},
): Hold {
  const target = proto as Record<string, Run>;
  const method = options.method ?? 'run';
  const original = target[method]!;
  let reached!: () => void;
  const atStatement = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = false;
  target[method] = async function (this: unknown, q: Sql) {
    const compiled = compile(q);
    const hold = !held && matches(compiled.text, compiled.params);
    if (hold) held = true;
    if (hold && !options.after) {
      reached();
      await gate;
    }
    const done = await original.call(this, q);
    if (hold && options.after) {
      reached();
      await gate;
    }
    return done;
  };
  const restore = () => {
    target[method] = original;
  };
  t.after(restore);
  return { reached: atStatement, release, restore };
}
