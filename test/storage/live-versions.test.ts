// Guarantees of RecordStore.isLive (what lets scoring write from the version it read without reading
// it again): a version read stays live until a newer version or a delete replaces it; once dead seqs
// are forgotten (a seal or merge dropped their rows) the store answers "cannot tell" for seqs in the
// forgotten range, and still knows the others.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openRecordStore, ROWS_PROJECT, ROWS_RUN, toolRows } from '../support/helpers.js';
import { waitFor } from '../support/wait-for.js';

const P = ROWS_PROJECT;
const R = ROWS_RUN;

test('isLive: false once replaced or deleted, null once the seq may have been forgotten', async (t) => {
  const { store } = await openRecordStore(t);
  await store.append(toolRows(0, 10), true);
  const mark = store.liveMark();
  const seqs = new Map(
    (
      await store.lookup(
        P,
        R,
        toolRows(0, 10).map((r) => r.id),
      )
    ).map((r) => [r.id, Number(r.seq)]),
  );
  const seqOf = (i: number) => seqs.get(toolRows(i, 1)[0]!.id)!;
  for (let i = 0; i < 10; i++) assert.equal(store.isLive(seqOf(i), mark), true);
  await store.append(
    toolRows(3, 1).map((r) => ({ ...r, name: 'v2' })),
    true,
  );
  await store.deleteSeqs([seqOf(7)]);
  assert.equal(store.isLive(seqOf(3), mark), false, 'replaced');
  assert.equal(store.isLive(seqOf(7), mark), false, 'deleted');
  assert.equal(store.isLive(seqOf(5), mark), true);
  // The seal leaves the dead rows out of its segment and forgets their seqs (3 and 7: the range 3..7).
  await store.seal();
  await waitFor(() => store.isLive(seqOf(3), mark) !== false, { what: 'the sealed dead seqs to be forgotten' });
  for (const i of [3, 5, 7]) assert.equal(store.isLive(seqOf(i), mark), null, `seq of row ${i}: in the forgotten range`);
  for (const i of [0, 2, 8, 9]) assert.equal(store.isLive(seqOf(i), mark), true, `seq of row ${i}`);
  const after = store.liveMark();
  assert.equal(store.isLive(seqOf(5), after), true, 'a mark taken after the forget knows');
});
