// Child process for the read-only tests: the folder's writer, driven one command per stdin line (JSON)
// and answering one JSON line per command on stdout, so a test decides when the writer logs, seals,
// merges or deletes while a read-only store in the test's process reads beside it.
// argv: dir, readerGraceMs. Commands: {op:'setup'} -> {projectId, logStreamId}; {op:'log', n, tag}
// -> {traceIds} (n traces of one span each, acknowledged); {op:'flush'}; {op:'compact'} -> {merges};
// {op:'delete', ids} (traces); {op:'deleteSpans', ids}; {op:'exit'}.
import { createInterface } from 'node:readline';
import { TraceStore } from '../../src/engine/trace-store.js';

const [dir, grace] = process.argv.slice(2) as [string, string];
const store = await TraceStore.open(dir, { threads: 1, readerGraceMs: Number(grace), autoCompact: false });
let projectId = '';
let logStreamId = '';

async function run(cmd: Record<string, unknown>): Promise<Record<string, unknown>> {
  switch (cmd['op']) {
    case 'setup': {
      projectId = store.createProject({ name: 'live' }).id;
      logStreamId = store.createLogStream(projectId, 'main').id;
      return { projectId, logStreamId };
    }
    case 'log': {
      const n = cmd['n'] as number;
      const tag = cmd['tag'] as string;
      const res = await store.logTraces(projectId, {
        log_stream_id: logStreamId,
        reliable: true,
        traces: Array.from({ length: n }, (_, i) => ({
          name: `${tag}-${i}`,
          input: `question ${tag} ${i}`,
          spans: [{ type: 'llm' as const, name: 'chat', input: 'q', output: 'a' }],
        })),
      });
      return { traceIds: res.trace_ids };
    }
    case 'flush':
      await store.flush();
      return {};
    case 'compact':
      return { merges: (await store.maintenance.compact()).merges };
    case 'delete': {
      const ids = cmd['ids'] as string[];
      const res = await store.records.delete('trace', projectId, {
        log_stream_id: logStreamId,
        filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: ids }],
      } as never);
      return { deleted: res.deleted };
    }
    case 'deleteSpans': {
      const res = await store.records.delete('span', projectId, {
        log_stream_id: logStreamId,
        filters: [{ type: 'id', column_id: 'id', operator: 'one_of', value: cmd['ids'] as string[] }],
      } as never);
      return { deleted: res.deleted };
    }
    case 'exit':
      await store.close();
      process.stdout.write('{"ok":true}\n');
      process.exit(0);
      break;
    default:
      throw new Error(`unknown op ${String(cmd['op'])}`);
  }
  return {};
}

process.stdout.write('{"ready":true}\n');
for await (const line of createInterface({ input: process.stdin })) {
  try {
    process.stdout.write(`${JSON.stringify({ ok: true, ...(await run(JSON.parse(line) as Record<string, unknown>)) })}\n`);
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ ok: false, error: (err as Error).message })}\n`);
  }
}
