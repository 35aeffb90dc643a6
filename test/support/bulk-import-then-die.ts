// Child process for tests: imports a file through the direct path (straight into segments) and
// SIGKILLs itself at the `killAt`-th fsync the import makes under the data folder, before that fsync
// reaches the disk (argv: dir, file, killAt, traces). `traces` (JSON) are logged first, so the import
// meets them in the log and the memory table. Prints "finished" when the import ends first.
import { TraceStore } from '../../src/engine/trace-store.js';
import { arm, installFaults } from './fs-faults.js';

const [dir, file, killAt, traces] = process.argv.slice(2) as [string, string, string, string];
installFaults();
const store = await TraceStore.open(dir, { autoCompact: false });
const project = store.findProjects({ name: 'target' })[0]!;
const run = store.listRuns(project.id).find((r) => r.name === 'main')!;
await store.logTraces(project.id, { log_stream_id: run.id, traces: JSON.parse(traces) });
let n = 0;
arm(
  dir,
  (call) => call.cls === 'fsync' && ++n === Number(killAt),
  () => {
    process.kill(process.pid, 'SIGKILL');
    return 'EIO';
  },
);
await store.data.importFile(file, { project: 'target', logStream: 'main' });
process.stdout.write('finished\n');
process.kill(process.pid, 'SIGKILL');
