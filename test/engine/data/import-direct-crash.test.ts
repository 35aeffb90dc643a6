// Guarantees: a direct import (straight into segments) killed with SIGKILL at any of its fsyncs leaves,
// after reopening, either the whole commit or nothing of it: the records it replaces show their old
// version or the imported one, all alike, never both; no unlisted segment file and no temporary file
// stays; the store takes writes again, and importing again completes it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../../scripts/binary/config.js';
import { TraceStore } from '../../../src/engine/trace-store.js';
import { idsPath } from '../../../src/storage/segments/segments.js';
import { idFilterPath } from '../../../src/storage/indexes/id-filter.js';
import { textIndexPath } from '../../../src/storage/indexes/text-index.js';
import { childIndexPath, childRowsPath } from '../../../src/storage/indexes/child-index.js';
import { topListsPath } from '../../../src/storage/indexes/top-lists.js';
import { loadManifest } from '../../../src/storage/manifest/manifest.js';
import { cpSync } from 'node:fs';
import { tempDir } from '../../support/helpers.js';
import { nodeEntry } from '../../support/node-entry.js';

const TRACES = 6;
const uuidFor = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const trace = (i: number, output: string) => ({
  id: uuidFor(i),
  name: `t${i}`,
  input: 'i',
  output,
  created_at: '2026-03-01T10:00:00.000Z',
  spans: [{ type: 'llm', name: 'chat', input: 'q', output: output, metrics: { num_input_tokens: i } }],
});

function files(dir: string, sub = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, sub), { withFileTypes: true })) {
    const p = join(sub, e.name);
    if (e.isDirectory()) out.push(...files(dir, p));
    else out.push(p);
  }
  return out;
}

test('SIGKILL at any fsync of a direct import leaves all of it or none, and no stray file', { timeout: 240_000 }, async () => {
  // The file: traces 0..5 with output "imported".
  const side = await TraceStore.open(tempDir());
  const sp = side.createProject({ name: 'side' });
  const ss = side.createLogStream(sp.id, 'main');
  await side.logTraces(sp.id, { log_stream_id: ss.id, traces: Array.from({ length: TRACES }, (_, i) => trace(i, 'imported')) as never });
  const file = join(tempDir(), 'all.parquet');
  const { rows } = await side.data.exportFile(sp.id, file, { format: 'parquet' });
  await side.close();
  // The target: traces 0..2 logged before (0 and 1 sealed; the child logs 2, which stays in its log).
  const template = join(tempDir(), 'template');
  const t0 = await TraceStore.open(template);
  const p = t0.createProject({ name: 'target' });
  const s = t0.createLogStream(p.id, 'main');
  await t0.logTraces(p.id, { log_stream_id: s.id, traces: [trace(0, 'before'), trace(1, 'before')] as never });
  await t0.flush();
  const countAll = async (st: TraceStore) =>
    Number(
      (await st.data.sql('SELECT (SELECT count(*) FROM spans) + (SELECT count(*) FROM traces) + (SELECT count(*) FROM sessions) AS n'))[0]![
        'n'
      ],
    );
  await t0.close();
  const before = 3 * 3; // traces 0..2, each with a span and a session

  const outcomes = new Set<string>();
  let finished = false;
  for (let killAt = 1; killAt <= 40 && !finished; killAt++) {
    const dir = join(tempDir(), 'data');
    cpSync(template, dir, { recursive: true });
    const child = spawnSync(
      process.execPath,
      [
        ...nodeEntry(join(ROOT, 'test', 'support', 'bulk-import-then-die.ts')),
        dir,
        file,
        String(killAt),
        JSON.stringify([trace(2, 'before')]),
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(child.signal, 'SIGKILL', child.stderr);
    finished = child.stdout.includes('finished');
    // No background merges; the seal of the replayed log is awaited below, before files are listed.
    const store = await TraceStore.open(dir, { autoCompact: false });
    try {
      // First thing (before the replayed log is sealed in the background): trace 2, logged before the
      // import (the import made that row dead), is logged again; it must replace every older version.
      await store.logTraces(p.id, { log_stream_id: s.id, traces: [trace(2, 'again')] as never });
      const two = await store.data.sql('SELECT output FROM traces WHERE id = $1', [uuidFor(2)]);
      assert.deepEqual(
        two.map((r) => r['output']),
        ['again'],
        `kill at fsync ${killAt}: the record logged after the reopen replaces every older version`,
      );
      const got = await store.data.sql('SELECT id, output FROM traces ORDER BY id');
      const outs = new Map(got.map((r) => [String(r['id']), String(r['output'])]));
      assert.equal(outs.size, got.length, `kill at fsync ${killAt}: no id twice`);
      const others = [...outs].filter(([id]) => id !== uuidFor(2)).map(([, o]) => o);
      const all = outs.size === TRACES && others.every((o) => o === 'imported');
      const none = outs.size === 3 && others.every((o) => o === 'before');
      assert.ok(all || none, `kill at fsync ${killAt}: all or nothing, got ${JSON.stringify([...outs])}`);
      if (finished) assert.ok(all, 'a finished import is all there');
      outcomes.add(all ? 'all' : 'none');
      // The import replaces the sessions too (ids are kept): the union of the two, each id once.
      const [ids] = await store.data.sql(
        'SELECT count(DISTINCT id) AS d, count(*) AS n FROM (SELECT id FROM spans UNION ALL SELECT id FROM traces UNION ALL SELECT id FROM sessions)',
      );
      assert.equal(Number(ids!['n']), Number(ids!['d']), `kill at fsync ${killAt}: no record twice`);
      if (!all) assert.equal(await countAll(store), before, `kill at fsync ${killAt}: nothing of the import`);
      else assert.ok((await countAll(store)) >= rows, `kill at fsync ${killAt}: every imported record`);
      // Nothing but what the manifest lists under records/, no temporary file anywhere (once the
      // replayed log is sealed: that seal writes its files before listing them).
      await store.flush();
      const listed = new Set(
        loadManifest(dir).segments.flatMap((g) => [
          g.file,
          relative(dir, idsPath(join(dir, g.file))),
          relative(dir, idFilterPath(join(dir, g.file))),
          relative(dir, textIndexPath(join(dir, g.file))),
          relative(dir, childIndexPath(join(dir, g.file))),
          relative(dir, childRowsPath(join(dir, g.file))),
          relative(dir, topListsPath(join(dir, g.file))),
        ]),
      );
      const stray = files(dir).filter((f) => (f.startsWith('records/') && !listed.has(f)) || /\.tmp-\d+$/.test(f) || f.startsWith('tmp/'));
      assert.deepEqual(stray, [], `kill at fsync ${killAt}: stray files`);
      await store.logTraces(p.id, { log_stream_id: s.id, traces: [trace(99, 'after')] as never });
      if (!all) {
        await store.data.importFile(file, { project: 'target', logStream: 'main' });
        const again = await store.data.sql("SELECT count(*) AS n FROM traces WHERE output = 'imported'");
        assert.equal(Number(again[0]!['n']), TRACES, 'importing again completes it (and replaces what was logged before)');
      }
    } finally {
      await store.close();
    }
  }
  assert.ok(finished, 'the kill points ran past the end of the import');
  assert.deepEqual([...outcomes].sort(), ['all', 'none'], 'both outcomes were reached');
});
