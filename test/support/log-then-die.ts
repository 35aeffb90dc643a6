// Child process for tests: opens a data folder, logs the given requests (JSON in argv[3]: a list of
// [projectId, logTraces body]), then kills itself with SIGKILL, leaving everything only in the
// write-ahead log, as a crash would.
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, json] = process.argv.slice(2) as [string, string];
const store = await TraceStore.open(dir);
for (const [projectId, body] of JSON.parse(json) as [string, never][]) await store.logTraces(projectId, body);
process.kill(process.pid, 'SIGKILL');
