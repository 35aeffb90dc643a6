// Child process of the interrupted-publish test: opens the store in TL_DATA and publishes to the
// folder TL_TARGET, killing itself (SIGKILL) before write number TL_KILL_AT. Prints `complete` when
// the publish ended before that write.
import { TraceStore } from '../../src/engine/trace-store.js';
import { LocalTarget } from '../../src/iceberg/target-local.js';
import { InterruptingTarget } from './iceberg.js';

const store = await TraceStore.open(process.env['TL_DATA']!, { autoCompact: false });
const target = new InterruptingTarget(new LocalTarget(process.env['TL_TARGET']!), Number(process.env['TL_KILL_AT']), 'kill');
await store.iceberg.publishTo(target);
await store.close();
process.stdout.write(`complete ${target.steps}\n`);
