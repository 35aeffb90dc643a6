// Child process for the crash test: logs small traces with reliable: true as fast as it can and
// prints "ack <trace id> <spans>" after each acknowledgement, until it is killed.
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, projectId, logStreamId, round] = process.argv.slice(2) as [string, string, string, string];
const store = await TraceStore.open(dir, { sealRows: 400, walRollBytes: 64 * 1024 });
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const n = 1 + (i % 5);
  const res = await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    reliable: true,
    traces: [
      {
        name: `r${round}-t${i}`,
        input: 'q'.repeat(200 + (i % 50)),
        spans: [
          {
            type: 'workflow',
            name: 'wf',
            spans: Array.from({ length: n - 1 }, (_, k) => ({ type: 'tool' as const, name: `tool${k}`, input: 'x'.repeat(100) })),
          },
        ],
      },
    ],
  });
  process.stdout.write(`ack ${res.trace_ids[0]} ${res.spans_count}\n`);
}
