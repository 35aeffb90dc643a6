// Holds the first statement a `run` method receives that matches, so a test can act while a write
// stands at that point. DuckDB and the files stay real; only the timing is the test's. `after` holds
// once the statement has run instead of before it.
import type { TestContext } from 'node:test';
import { compile, type Sql } from '../../src/query/sql.js';

type Run = (q: Sql) => Promise<void>;

export interface Hold {
  /** Resolves when the matching statement is held. */
  readonly reached: Promise<void>;
  /** Lets it go on. */
  release(): void;
  /** Puts the original method back (also done after the test). */
  restore(): void;
}

export function holdSql(t: TestContext, proto: { run: Run }, matches: (sql: string) => boolean, options: { after?: boolean } = {}): Hold {
  const original = proto.run;
  let reached!: () => void;
  const atStatement = new Promise<void>((r) => (reached = r));
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let held = false;
  proto.run = async function (this: unknown, q: Sql) {
    const hold = !held && matches(compile(q).text);
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
    proto.run = original;
  };
  t.after(restore);
  return { reached: atStatement, release, restore };
}
