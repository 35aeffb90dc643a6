// Child process for tests: imports a file into a data folder in small batches and SIGKILLs itself
// right after batch `afterBatches` is durable, as the next batch is being read and written, as a
// crash would (argv: dir, file, batchRows, afterBatches).
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, file, batchRows, afterBatches] = process.argv.slice(2) as [string, string, string, string];
const store = await TraceStore.open(dir);
let batches = 0;
await store.data.importFile(file, {
  project: 'imported',
  logStream: 'main',
  batchRows: Number(batchRows),
  onProgress: () => {
    if (++batches === Number(afterBatches)) setImmediate(() => process.kill(process.pid, 'SIGKILL'));
  },
});
process.stdout.write('finished before the kill\n');
process.kill(process.pid, 'SIGKILL');
