// For probes: every statement the store runs through the pool (Database.all), with its compiled SQL
// and its time from the call to its result (so waiting for a connection and the main thread is inside).
import { Database } from '../src/db/database.js';
import { compile } from '../src/query/sql.js';

/** Calls `seen` after each statement; returns the function that stops watching. */
export function watchStatements(seen: (s: { text: string; params: unknown[]; ms: number }) => void): () => void {
  const all = Database.prototype.all;
  Database.prototype.all = async function (this: Database, q) {
    const t = performance.now();
    try {
      return await all.call(this, q);
    } finally {
      const { text, params } = compile(q);
      seen({ text, params: params as unknown[], ms: performance.now() - t });
    }
  };
  return () => {
    Database.prototype.all = all;
  };
}

/** A statement as a line of a probe's report: its time, and its text on one line (long ones cut in the middle). */
export function statementLine(text: string, ms: number): string {
  const one = text.replace(/\s+/g, ' ');
  return `${ms.toFixed(1)} ms: ${one.length > 260 ? `${one.slice(0, 200)} ... ${one.slice(-60)}` : one}`;
}
