// Batch mode, as an application instruments itself: GALILEO_PROJECT and GALILEO_LOG_STREAM name the
// project and log stream (init() with no arguments, as the client's docs show), the logger collects
// two traces in memory (one with nested agent > llm, workflow > retriever + tool spans; one
// single-LLM-span trace), and flush() sends them. Run in its own process by the e2e tests with
// GALILEO_PKG naming the client package (galileo or the 1.32 alias).
import { writeFileSync } from 'node:fs';

type Galileo = typeof import('galileo');
const args = JSON.parse(process.env['FLOW_ARGS'] ?? '{}') as { sessionExternalId?: string };
const g = (await import(process.env['GALILEO_PKG'] ?? 'galileo')) as Galileo;

const T0 = Date.parse('2026-05-04T10:00:00.000Z');
const at = (ms: number) => new Date(T0 + ms);

await g.init();
const logger = g.getLogger();
let sessionId: string | undefined;
if (args.sessionExternalId) {
  sessionId = await logger.startSession({ name: 'batch session', externalId: args.sessionExternalId });
}

logger.startTrace({
  input: 'What is the weather in Paris?',
  name: 'weather-question',
  createdAt: at(0),
  durationNs: 900_000_000,
  metadata: { userId: 'u-42', plan_tier: 'pro' },
  tags: ['e2e', 'batch'],
});
// galileo before 1.25 has no agent spans: a workflow span takes the agent's place there.
if (typeof logger.addAgentSpan === 'function') {
  logger.addAgentSpan({
    input: 'plan the answer',
    name: 'planner',
    createdAt: at(10),
    agentType: 'planner',
    metadata: { agentVersion: '3' },
    tags: ['agent'],
  } as never);
} else {
  logger.addWorkflowSpan({
    input: 'plan the answer',
    name: 'planner',
    createdAt: at(10),
    metadata: { agentVersion: '3' },
    tags: ['agent'],
  } as never);
}
logger.addLlmSpan({
  input: [
    { role: 'system', content: 'You are a weather bot.' },
    { role: 'user', content: 'What is the weather in Paris?' },
  ],
  output: { role: 'assistant', content: 'Let me look that up.' },
  model: 'gpt-4o-mini',
  name: 'chat-completion',
  createdAt: at(20),
  durationNs: 250_000_000,
  numInputTokens: 21,
  numOutputTokens: 7,
  totalTokens: 28,
  numReasoningTokens: 3,
  numCachedInputTokens: 5,
  timeToFirstTokenNs: 80_000_000,
  temperature: 0.2,
  tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
  metadata: { promptId: 'p-1' },
  tags: ['llm'],
} as never);
logger.addWorkflowSpan({ input: 'look up the weather', name: 'lookup', createdAt: at(30), metadata: { stage: 'rag' } });
logger.addRetrieverSpan({
  input: 'weather Paris today',
  output: [
    { content: 'Paris: sunny, 21 C', metadata: { source: 'meteo', rank: 1 } },
    { content: 'Paris: light wind', metadata: { source: 'wind', rank: 2 } },
  ] as never,
  name: 'weather-search',
  createdAt: at(40),
  durationNs: 12_000_000,
});
logger.addToolSpan({
  input: '{"city":"Paris"}',
  output: '{"temp":21}',
  name: 'get_weather',
  createdAt: at(50),
  toolCallId: 'call_123',
  durationNs: 30_000_000,
  metadata: { cached: 'false' },
} as never);
logger.conclude({ output: 'weather found' }); // workflow
logger.conclude({ output: 'answer planned' }); // agent
logger.conclude({ output: 'It is sunny and 21 C in Paris.', durationNs: 1_000_000_000 }); // trace

logger.addSingleLlmSpanTrace({
  input: [{ role: 'user', content: 'Say hi' }],
  output: { role: 'assistant', content: 'hi' },
  model: 'gpt-4o',
  name: 'single-llm',
  createdAt: at(2000),
  numInputTokens: 2,
  numOutputTokens: 1,
  totalTokens: 3,
  tags: ['single'],
  metadata: { kind: 'single' },
} as never);

const sent = logger.traces.map((tr) => tr.toJSON());
await g.flush();
const left = logger.traces.length;
writeFileSync(process.env['FLOW_OUT']!, JSON.stringify({ sent, left, sessionId: sessionId ?? null }));
process.exit(0);
