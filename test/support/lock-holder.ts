// Child process for the lock tests: opens a data folder as the engine does and keeps it open until it
// is killed. Prints "held <pid>" once open, or "refused <code> <message>" and exits 2.
import { TraceStore } from '../../src/engine/trace-store.js';

const dir = process.argv[2]!;
try {
  await TraceStore.open(dir, { threads: 1 });
  process.stdout.write(`held ${process.pid}\n`);
  setInterval(() => {}, 60_000);
} catch (err) {
  const e = err as { code?: string; message: string };
  process.stdout.write(`refused ${e.code} ${e.message}\n`);
  process.exit(2);
}
