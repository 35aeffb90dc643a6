// The record's forms and the conversions between them (src/record/): every column reaches the codec
// by its kind; a stored row read back writes the same record again; a row of another shape is
// refused rather than typed; values of unknown type are converted as a batch would store them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RecordBatch } from 'apache-arrow';
import { StorageError } from '../../src/errors.js';
import * as FIELDS from '../../src/record/field-names.js';
import { fieldsFrom, isDraft, isLogRow, isStoredRow, storedRows } from '../../src/record/record-checks.js';
import { RECORD_COLUMNS } from '../../src/record/record-columns.js';
import { JsonText, type LogRow } from '../../src/record/record.js';
import { storedToWire } from '../../src/record/row-codec.js';
import { BatchBuilder } from '../../src/storage/memtable/batch-builder.js';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, rowId } from '../support/helpers.js';

/** A tool span with every field a tool span can hold set. */
function fullRow(k: number): LogRow {
  return {
    seq: 0,
    id: rowId(k),
    type: 'tool',
    project_id: ROWS_PROJECT,
    run_id: ROWS_RUN,
    session_id: rowId(1000),
    trace_id: rowId(1001),
    parent_id: rowId(1001),
    step_number: 3,
    name: 'search',
    input: { query: 'q', n: [1, 2] },
    output: 'plain text',
    created_at: 1_700_000_000_000_123,
    updated_at: 1_700_000_000_000_456,
    tags: ['a', 'b'],
    metrics: { duration_ns: 1500, score: 0.25 },
    user_metadata: { user: 'u1' },
    dataset_metadata: { split: 'test' },
    status_code: 200,
    external_id: 'ext',
    dataset_input: 'di',
    dataset_output: 'do',
    is_complete: false,
    has_children: false,
    progress_message: 'p',
    error_message: 'e',
    tool_call_id: 'call-1',
    extra: { events: [{ type: 'x' }] },
  };
}

test('the field lists name every column once, all but the flags a batch derives', () => {
  const listed = Object.values(FIELDS).flat();
  assert.equal(new Set(listed).size, listed.length, 'no column in two lists');
  const fields = RECORD_COLUMNS.filter((c) => c.holds !== 'flag').map((c) => c.name);
  assert.deepEqual([...listed].sort(), [...fields].sort());
  assert.deepEqual(
    RECORD_COLUMNS.filter((c) => c.holds === 'flag').map((c) => c.name),
    FIELDS.IO_FIELDS.map((n) => `${n}_json`),
  );
});

test('a stored row read back writes the same record again, and is stored the same', async (t) => {
  const { store } = await openRecordStore(t);
  const row = fullRow(1);
  await store.append([row], true);
  const [stored] = await store.lookup(ROWS_PROJECT, ROWS_RUN, [row.id]);
  assert.ok(stored && isStoredRow(stored));
  assert.deepEqual(storedToWire(stored), { ...fullRow(1), seq: row.seq });
  // Written again from its stored form: the new version reads back as the old one did.
  const again = { ...storedToWire(stored), updated_at: row.updated_at };
  await store.append([again], true);
  const [next] = await store.lookup(ROWS_PROJECT, ROWS_RUN, [row.id]);
  assert.ok(next);
  assert.deepEqual({ ...next, seq: stored.seq }, stored);
  assert.notEqual(next.seq, stored.seq);
});

test('a result row that is not a stored row is refused, naming the column', async (t) => {
  const { store } = await openRecordStore(t);
  await store.append([fullRow(1)], true);
  const [stored] = await store.lookup(ROWS_PROJECT, ROWS_RUN, [rowId(1)]);
  assert.ok(stored);
  const cases: [Record<string, unknown>, string][] = [
    [{ ...stored, step_number: '3' }, 'step_number'],
    [{ ...stored, seq: 5 }, 'seq'],
    [{ ...stored, id: null }, 'id'],
    [{ ...stored, metrics: [{ key: 'a', value: 'x' }] }, 'metrics'],
    [{ ...stored, tags: [1] }, 'tags'],
  ];
  for (const [bad, column] of cases) {
    assert.equal(isStoredRow(bad), false, column);
    assert.throws(
      () => storedRows([stored, bad]),
      (err: unknown) => err instanceof StorageError && err.message.includes(`column ${column}`),
    );
  }
  const { created_at: _c, ...missing } = stored;
  assert.equal(isStoredRow(missing), false, 'a column left out');
  assert.equal(isStoredRow({ ...stored, dataset_input: null, tags: null, metrics: null }), true, 'NULL where a column may be NULL');
});

/** Every column of a one-row batch, as plain values. */
function columns(batch: RecordBatch): Record<string, unknown> {
  const row = batch.get(0)!.toJSON();
  return JSON.parse(JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
}

test('values of unknown type become fields that a batch stores as it stores the values themselves', () => {
  const base: LogRow = { seq: 7, id: rowId(1), type: 'llm', project_id: ROWS_PROJECT, run_id: ROWS_RUN, created_at: 1_700_000_000_000_000 };
  const odd: Record<string, unknown> = {
    step_number: '3',
    temperature: 0.5,
    status_code: null,
    is_complete: 'yes',
    has_children: true,
    model: 42,
    finish_reason: 'stop',
    tags: ['a', 5, null],
    metrics: { a: 1, b: 'x', c: null },
    user_metadata: { s: 's', n: 5, o: { x: 1 }, z: null },
    dataset_metadata: { only: 'strings' },
    input: { messages: [] },
    output: new JsonText('{"role":"assistant"}'),
    tools: [{ name: 't' }],
    extra: new JsonText('{"events":[]}'),
    input_json: false,
    nonsense: 1,
  };
  const fields = fieldsFrom((name) => ({ ...base, ...odd })[name]);
  assert.ok(isLogRow(fields) && isDraft(fields));
  assert.equal(fields.step_number, undefined, 'a string in a number column is left out');
  assert.equal(fields.model, '42', 'a number in a text column becomes text');
  assert.deepEqual(fields.tags, ['a', '5', 'null']);
  assert.deepEqual(fields.metrics, { a: 1 });
  assert.deepEqual(fields.user_metadata, { s: 's', n: '5', o: '{"x":1}' });
  // Stored exactly as the unconverted values would have been.
  const unconverted: LogRow = Object.assign({ ...base }, odd);
  assert.deepEqual(columns(new BatchBuilder().build([fields])), columns(new BatchBuilder().build([unconverted])));
  // BIGINTs (as DuckDB gives them) become numbers; without an id, a type or a created_at there is no draft.
  const big = fieldsFrom((name) => ({ ...base, seq: 9n, created_at: 5n, control_id: 2n })[name]);
  assert.equal(big.seq, 9);
  assert.equal(big.created_at, 5);
  assert.equal(big.control_id, 2);
  assert.equal(isDraft(fieldsFrom((name) => ({ ...base, id: null })[name])), false);
  assert.equal(isLogRow(fieldsFrom((name) => ({ ...base, run_id: undefined })[name])), false);
});
