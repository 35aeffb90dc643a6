// Guarantees record content becomes readable text: durations, previews of messages and documents, metric values with roll-ups.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asDocuments, asMessages, asText, formatDuration, isError, metricValue, preview } from '../../../src/ui/lib/format.js';
import { selectedColumnIds, visibleColumns } from '../../../src/ui/lib/table-columns.js';
import type { ColumnInfo, RecordRow } from '../../../src/ui/lib/types.js';

test('durations read in the unit that fits', () => {
  assert.equal(formatDuration(420), '0 µs');
  assert.equal(formatDuration(4_200), '4 µs');
  assert.equal(formatDuration(4_200_000), '4.2 ms');
  assert.equal(formatDuration(420_000_000), '420 ms');
  assert.equal(formatDuration(4.2e9), '4.20 s');
  assert.equal(formatDuration(125e9), '2 min 5 s');
  assert.equal(formatDuration(7322e9), '2 h 2 min');
  assert.equal(formatDuration(3 * 86_400e9), '3 d 0 h');
  assert.equal(formatDuration(null), '');
});

test('messages, content parts, tool calls and documents are recognised; anything else is text', () => {
  const msgs = asMessages([
    {
      role: 'user',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'file', file_id: 'f1' },
      ],
    },
    { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'calc', arguments: '{"a":1}' } }] },
    { role: 'tool', content: '2', tool_call_id: 'c1' },
  ])!;
  assert.deepEqual(
    msgs.map((m) => m.role),
    ['user', 'assistant', 'tool'],
  );
  assert.equal(msgs[0]!.text, 'hi\n[file f1]');
  assert.deepEqual(msgs[1]!.toolCalls, [{ id: 'c1', name: 'calc', arguments: '{"a":1}' }]);
  assert.equal(msgs[2]!.toolCallId, 'c1');
  assert.equal(asMessages({ role: 'assistant', content: 'x' })!.length, 1);
  assert.equal(asMessages('plain'), null);
  assert.equal(asMessages([{ role: 'user', content: 'a' }, 'b']), null);
  assert.deepEqual(asDocuments([{ page_content: 'one', metadata: { s: 1 } }, { content: 'two' }]), [
    { text: 'one', metadata: { s: 1 } },
    { text: 'two', metadata: null },
  ]);
  assert.equal(asDocuments([{ other: 1 }]), null);
  assert.equal(asText('{"a":[1]}'), '{\n  "a": [\n    1\n  ]\n}');
  assert.equal(asText('{not json'), '{not json');
});

test('previews squeeze a value to one line, the last message of a conversation first', () => {
  assert.equal(
    preview([
      { role: 'system', content: 'rules' },
      { role: 'user', content: 'what\nnow?' },
    ]),
    'user: what now?',
  );
  assert.equal(preview([{ content: 'doc' }, { content: 'd2' }]), '2 documents: doc');
  assert.equal(preview('x'.repeat(300)).length, 200);
  assert.equal(preview(null), '');
  assert.equal(preview('<img src=x onerror=alert(1)>'), '<img src=x onerror=alert(1)>');
});

test('a metric reads the record’s own value first, then its roll-up', () => {
  const r: RecordRow = {
    id: '1',
    type: 'trace',
    metrics: { duration_ns: 5 },
    metric_info: {
      duration_ns: { status_type: 'success', value: 5 },
      num_total_tokens: { status_type: 'roll_up', value: 30, roll_up_method: 'sum' },
    },
  };
  assert.deepEqual(metricValue(r, 'duration_ns'), { value: 5, rollUp: null });
  assert.deepEqual(metricValue(r, 'num_total_tokens'), { value: 30, rollUp: 'sum' });
  assert.deepEqual(metricValue(r, 'missing'), { value: null, rollUp: null });
  assert.equal(isError({ status_code: 500, error_message: '' }), true);
  assert.equal(isError({ status_code: 200, error_message: 'boom' }), true);
  assert.equal(isError({ status_code: null, error_message: '' }), false);
});

test('tables show the chosen columns the run has, and select what rows need', () => {
  const cols = ['name', 'input', 'created_at', 'status_code', 'metrics/duration_ns'].map(
    (id) => ({ id, category: id.startsWith('metrics/') ? 'metric' : 'standard' }) as ColumnInfo,
  );
  assert.deepEqual(visibleColumns('traces', null, cols), ['name', 'input', 'created_at', 'metrics/duration_ns', 'status_code']);
  assert.deepEqual(visibleColumns('traces', ['metrics/duration_ns', 'metrics/gone'], cols), ['metrics/duration_ns']);
  assert.deepEqual(selectedColumnIds(['metrics/duration_ns'], cols), ['metrics/duration_ns', 'name', 'created_at', 'status_code']);
});
