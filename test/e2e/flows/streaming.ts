// Streaming mode (galileo >= 1.33): a session started by external id, a trace sent as soon as it
// starts, each span sent as it is added, workflow/agent spans and the trace updated when they
// conclude. A second logger then starts a session with the same external id and must get the same
// session back (sessions/search), and a third resumes the trace by id (GET trace, GET span) to add
// one more span under the agent.
import { writeFileSync } from 'node:fs';

type Galileo = typeof import('galileo');
const args = JSON.parse(process.env['FLOW_ARGS'] ?? '{}') as { projectName: string; logStream: string; externalId: string };
const g = (await import(process.env['GALILEO_PKG'] ?? 'galileo')) as Galileo;

const T0 = Date.parse('2026-05-05T09:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);

const logger = await g.GalileoLogger.create({ projectName: args.projectName, logStreamName: args.logStream, mode: 'streaming' });
const sessionId = await logger.startSession({
  name: 'support chat',
  externalId: args.externalId,
  metadata: { customerId: 'c-7', channel_name: 'web' },
});

const trace = logger.startTrace({
  input: 'My order is late',
  name: 'support-turn',
  createdAt: at(0),
  tags: ['streaming'],
  metadata: { turnNo: '1' },
});
const agent = logger.addAgentSpan({ input: 'handle complaint', name: 'support-agent', createdAt: at(5), agentType: 'react' } as never);
const llm = logger.addLlmSpan({
  input: [{ role: 'user', content: 'My order is late' }],
  output: {
    role: 'assistant',
    content: 'Let me check your order.',
    tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'order_status', arguments: '{"order":"A1"}' } }],
  },
  model: 'claude-x',
  name: 'reason',
  createdAt: at(10),
  numInputTokens: 9,
  numOutputTokens: 6,
  totalTokens: 15,
  numReasoningTokens: 4,
  metadata: { promptVersion: 'v2' },
} as never);
const tool = logger.addToolSpan({
  input: '{"order":"A1"}',
  output: 'shipped yesterday',
  name: 'order_status',
  createdAt: at(20),
  toolCallId: 'call_9',
  durationNs: 7_000_000,
} as never);
const retriever = logger.addRetrieverSpan({
  input: 'late order policy',
  output: ['Refunds after 10 days.', 'Track at /orders.'] as never,
  name: 'policy-search',
  createdAt: at(25),
});
logger.conclude({ output: 'order shipped', durationNs: 40_000_000 }); // agent -> PATCH span
logger.conclude({ output: 'Your order shipped yesterday.', durationNs: 50_000_000, statusCode: 200 }); // trace -> PATCH trace
await logger.terminate();

// Same external id: the session is found, not created again.
const again = await g.GalileoLogger.create({ projectName: args.projectName, logStreamName: args.logStream, mode: 'streaming' });
const sessionAgain = await again.startSession({ externalId: args.externalId });
await again.terminate();

// Resume the trace and the agent span by id, add one more span under the agent.
const resumed = await g.GalileoLogger.create({
  projectName: args.projectName,
  logStreamName: args.logStream,
  mode: 'streaming',
  traceId: trace.id,
  spanId: agent.id,
} as never);
const late = resumed.addToolSpan({ input: 'notify', output: 'sent', name: 'notify-customer', createdAt: at(60) });
await resumed.terminate();

writeFileSync(
  process.env['FLOW_OUT']!,
  JSON.stringify({
    sessionId,
    sessionAgain,
    traceId: trace.id,
    agentId: agent.id,
    llmId: llm.id,
    toolId: tool.id,
    retrieverId: retriever.id,
    lateId: late.id,
    resumedParents: resumed.currentParent()?.id ?? null,
  }),
);
process.exit(0);
