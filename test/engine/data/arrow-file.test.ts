// Guarantees of the Arrow IPC file writer used by exports: the file reads back as the batches given,
// and each batch's bytes are in the file before the next batch is asked for (so memory holds at most
// one batch, whatever the export's size).
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Float64, Table, tableFromIPC, Utf8, vectorFromArray, type RecordBatch } from 'apache-arrow';
import { writeArrowFile } from '../../../src/engine/data/arrow-file.js';
import { tempDir } from '../../support/helpers.js';

function batchOf(from: number, n: number): RecordBatch {
  const ids = Array.from({ length: n }, (_, i) => `id-${from + i}`);
  const table = new Table({
    id: vectorFromArray(ids, new Utf8()),
    n: vectorFromArray(
      ids.map((_, i) => from + i),
      new Float64(),
    ),
  });
  return table.batches[0]!;
}

test('an Arrow file is written batch by batch and reads back whole', async (t) => {
  const path = join(tempDir(t), 'out.arrow');
  const sizes: number[] = [];
  async function* batches() {
    for (let i = 0; i < 5; i++) {
      if (i > 0) sizes.push(statSync(path).size);
      yield batchOf(i * 1000, 1000);
    }
    sizes.push(statSync(path).size);
  }
  const rows = await writeArrowFile(path, batches());
  assert.equal(rows, 5000);
  assert.equal(sizes.length, 5);
  for (let i = 1; i < sizes.length; i++)
    assert.ok(sizes[i]! > sizes[i - 1]!, `batch ${i} reached the file before batch ${i + 1} was asked for: ${sizes.join(', ')}`);
  const table = tableFromIPC(readFileSync(path));
  assert.equal(table.numRows, 5000);
  assert.equal(table.getChild('id')!.get(4321), 'id-4321');
  assert.equal(table.getChild('n')!.get(4999), 4999);
});

test('an Arrow file of one empty batch keeps its schema', async (t) => {
  const path = join(tempDir(t), 'empty.arrow');
  async function* batches() {
    yield batchOf(0, 0);
  }
  assert.equal(await writeArrowFile(path, batches()), 0);
  const table = tableFromIPC(readFileSync(path));
  assert.equal(table.numRows, 0);
  assert.deepEqual(
    table.schema.fields.map((f) => f.name),
    ['id', 'n'],
  );
});
