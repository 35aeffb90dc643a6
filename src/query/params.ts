// Positional parameters: each value gets the next `$n`, in order of appearance in the SQL text.
import type { Param } from '../db/database.js';

export class Params {
  readonly values: Param[];
  constructor(initial: readonly Param[] = []) {
    this.values = [...initial];
  }
  /** Adds a value and returns its placeholder. */
  add(value: Param): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}
