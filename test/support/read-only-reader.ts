// Child process for the read-only tests: opens a folder with readOnly: true (run as a user who may not
// write it), reads it every way a script would, tries a write, and prints one JSON line of what it saw.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, projectId, logStreamId] = process.argv.slice(2) as [string, string, string];
const store = await TraceStore.open(dir, { readOnly: true, threads: 1 });
const scope = { log_stream_id: logStreamId };
const out = mkdtempSync(join(tmpdir(), 'tracelake-reader-out-'));
try {
  const traces = (await store.count('trace', projectId, scope)).total_count;
  const spans = (await store.count('span', projectId, scope)).total_count;
  const names = (await store.search('trace', projectId, { ...scope, limit: 1000 })).records.map((r) => r['name']).sort();
  const sql = await store.data.sql('SELECT count(*)::INTEGER AS n FROM traces');
  const arrow = await store.data.sql('SELECT id FROM spans', [], { format: 'arrow' });
  const file = join(out, 'spans.jsonl');
  await store.data.exportFile(projectId, file, { format: 'jsonl' });
  const exported = readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length;
  const projects = store.catalog.listProjects().projects.map((p: { name: string }) => p.name);
  let writeError = '';
  try {
    await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [{ name: 'nope' }] });
  } catch (err) {
    writeError = (err as { code?: string }).code ?? String(err);
  }
  process.stdout.write(
    `${JSON.stringify({ traces, spans, names, sql: sql[0]!['n'], arrowRows: arrow.numRows, exported, projects, writeError })}\n`,
  );
} finally {
  await store.close();
  rmSync(out, { recursive: true, force: true });
}
