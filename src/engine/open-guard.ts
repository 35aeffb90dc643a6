// Whether the store is still open, and whether it may write. One guard is shared by every part of a
// TraceStore: after close(), operations that write, or read records, fail with STORE_CLOSED; catalog
// reads keep answering from memory. A store opened read-only refuses writes with STORE_READ_ONLY
// (the storage and the catalog refuse them too: this names the operation earlier).
import { ConflictError, ReadOnlyError } from '../errors.js';

export class OpenGuard {
  #closed = false;
  readonly readOnly: boolean;

  constructor(readOnly = false) {
    this.readOnly = readOnly;
  }

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#closed = true;
  }

  assertOpen(): void {
    if (this.#closed) throw new ConflictError('STORE_CLOSED', 'the trace store is closed');
  }

  /** Open and not read-only; `what` names the operation in the error. */
  assertWritable(what: string): void {
    this.assertOpen();
    if (this.readOnly) throw new ReadOnlyError(what);
  }
}
