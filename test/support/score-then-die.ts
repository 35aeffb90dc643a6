// Child process for the scoring crash test: opens a data folder whose log stream has scorers enabled,
// logs the given traces (JSON in argv[4]) with online scoring in small batches, and once some records
// are scored and others still wait, prints how many were scored and kills itself with SIGKILL.
import { writeSync } from 'node:fs';
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, projectId, json] = process.argv.slice(2) as [string, string, string];
const store = await TraceStore.open(dir, { scoring: { batchSize: 4, idleMs: 20 } });
for (const body of JSON.parse(json) as never[]) await store.logTraces(projectId, body);
for (;;) {
  const { counts, queued, scans } = store.scorers.online;
  const scored = (counts['success'] ?? 0) + (counts['not_applicable'] ?? 0);
  if (scored >= 8) {
    writeSync(1, `${JSON.stringify({ scored, queued, scans })}\n`);
    process.kill(process.pid, 'SIGKILL');
  }
  await new Promise((r) => setTimeout(r, 1));
}
