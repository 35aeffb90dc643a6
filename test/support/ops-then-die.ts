// Child process for tests: opens a data folder, runs the given operations (JSON in argv[3]), then kills
// itself with SIGKILL, leaving unsealed work only in the write-ahead log, as a crash would.
// Operations: ["log", projectId, logTraces body], ["spans", projectId, logSpans body],
// ["delete", level, projectId, body], ["flush"].
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, json] = process.argv.slice(2) as [string, string];
const store = await TraceStore.open(dir);
for (const op of JSON.parse(json) as unknown[][]) {
  if (op[0] === 'log') await store.logTraces(op[1] as string, op[2] as never);
  else if (op[0] === 'spans') await store.records.logSpans(op[1] as string, op[2] as never);
  else if (op[0] === 'delete') await store.records.delete(op[1] as never, op[2] as string, op[3] as never);
  else if (op[0] === 'flush') await store.flush();
}
process.kill(process.pid, 'SIGKILL');
