// Writes Arrow record batches into an Arrow IPC file with bounded memory. apache-arrow's writer
// queues its output bytes in an unbounded in-memory queue, and its Node stream adapter
// (RecordBatchFileWriter.throughNode) accepts every batch at once without waiting for the file, so a
// large export would sit in memory whole. Here the writer's sink writes each message to the file
// descriptor as it is produced, so at most one batch is held at a time.
import { closeSync, openSync, writeSync } from 'node:fs';
import { AsyncByteQueue, RecordBatchFileWriter, type RecordBatch } from 'apache-arrow';

/** The writer's byte sink: every chunk goes straight to the file (a local file; writes are short). */
class FileSink extends AsyncByteQueue {
  readonly #fd: number;

  constructor(fd: number) {
    super();
    this.#fd = fd;
  }

  override write(value: Uint8Array | ArrayBufferView | ArrayBuffer): void {
    const bytes =
      value instanceof Uint8Array
        ? value
        : ArrayBuffer.isView(value)
          ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
          : new Uint8Array(value);
    for (let done = 0; done < bytes.byteLength; ) done += writeSync(this.#fd, bytes, done, bytes.byteLength - done);
  }
}

/** Writes the batches (one schema) to a new Arrow IPC file at `path`; returns the rows written. */
export async function writeArrowFile(path: string, batches: AsyncIterable<RecordBatch>): Promise<number> {
  const fd = openSync(path, 'w');
  try {
    const writer = new RecordBatchFileWriter();
    writer.reset(new FileSink(fd));
    let rows = 0;
    for await (const batch of batches) {
      writer.write(batch);
      rows += batch.numRows;
    }
    // Writes the footer (the batches' offsets) through the sink.
    writer.close();
    return rows;
  } finally {
    closeSync(fd);
  }
}
