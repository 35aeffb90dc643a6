// Child process for the torn-batch and mid-seal crash test: logs traces of 10-40 spans with reliable:
// true into tiny memory tables (a seal starts every few requests, merges follow), printing
// "ack <trace id> <spans>" after each acknowledgement, until it is killed.
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, projectId, logStreamId, round] = process.argv.slice(2) as [string, string, string, string];
// mergePauseMs 0: merges run while rows still arrive, so kills land in them too.
const store = await TraceStore.open(dir, {
  memTableBytes: 48 * 1024,
  compaction: { maxSegmentRows: 5_000, deadShare: 0.3 },
  mergePauseMs: 0,
});
process.stdout.write('ready\n');
for (let i = 0; ; i++) {
  const n = 10 + (i % 31);
  const res = await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    reliable: true,
    traces: [
      {
        name: `r${round}-t${i}`,
        input: 'q'.repeat(100 + (i % 50)),
        spans: [
          {
            type: 'workflow',
            name: 'wf',
            spans: Array.from({ length: n - 1 }, (_, k) => ({
              type: 'tool' as const,
              name: `tool${k}`,
              input: 'x'.repeat(50),
              metrics: { latency: k },
            })),
          },
        ],
      },
    ],
  });
  process.stdout.write(`ack ${res.trace_ids[0]} ${res.spans_count}\n`);
}
