// Whether the store is still open. One guard is shared by every part of a TraceStore: after close(),
// operations that write, or read records, fail with STORE_CLOSED; catalog reads keep answering from memory.
import { ConflictError } from '../errors.js';

export class OpenGuard {
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  close(): void {
    this.#closed = true;
  }

  assertOpen(): void {
    if (this.#closed) throw new ConflictError('STORE_CLOSED', 'the trace store is closed');
  }
}
