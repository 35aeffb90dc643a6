// Guarantees: the LLM judge speaks the chat-completions protocol to a real local server: it sends the
// model, tracelake's prompt and a strict JSON schema, with the bearer key; verdicts become 1/0 (votes
// averaged); a malformed answer fails that record; 429s and 5xx are retried after Retry-After or a
// back-off and then succeed, or become an error once the retries are spent; a silent endpoint times out
// as an error. Through the store, a preset LLM scorer writes its verdict, explanation and num_judges.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { JudgeClient } from '../../src/scoring/judge/client.js';
import { PRESET_PROMPTS } from '../../src/scoring/judge/prompts.js';
import type { ScorableRecord } from '../../src/scoring/outcome.js';
import { openStore } from '../support/helpers.js';

type Handler = (body: any, n: number, res: ServerResponse) => void;

async function judgeServer(t: TestContext, handler: Handler): Promise<{ url: string; seen: { body: any; auth: string | undefined }[] }> {
  const seen: { body: any; auth: string | undefined }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const body = JSON.parse(text);
      seen.push({ body, auth: req.headers.authorization });
      handler(body, seen.length, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, seen };
}

const answer = (res: ServerResponse, content: string) => {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
};
const verdict = (res: ServerResponse, v: boolean, why = 'because') => answer(res, JSON.stringify({ explanation: why, verdict: v }));

const rec = (output: string): ScorableRecord =>
  ({ id: 'r', type: 'llm', seq: 1, input: 'what is 2+2?', output }) as unknown as ScorableRecord;
const prompt = PRESET_PROMPTS['correctness']!;

test('verdicts, votes, the request sent', async (t) => {
  const { url, seen } = await judgeServer(t, (body, n, res) =>
    verdict(res, body.messages[1].content.includes('4') && n % 3 !== 0, `vote ${n}`),
  );
  const judge = new JudgeClient({ url, apiKey: 'secret-key', models: { 'gpt-4.1-mini': 'local-model' }, concurrency: 1 });
  const one = await judge.runner(prompt, 'gpt-4.1-mini', 1)([rec('4'), rec('5')]);
  assert.deepEqual(
    one.map((o) => (o.status === 'success' ? o.value : o.status)),
    [1, 0],
  );
  assert.equal(seen[0]!.body.model, 'local-model');
  assert.equal(seen[0]!.auth, 'Bearer secret-key');
  assert.equal(seen[0]!.body.response_format.type, 'json_schema');
  assert.match(seen[0]!.body.messages[0].content, /tracelake/);
  const three = await judge.runner(prompt, 'gpt-4.1-mini', 3)([rec('4')]);
  assert.equal(three[0]!.status, 'success');
  assert.ok(three[0]!.status === 'success' && Math.abs(three[0]!.value - 2 / 3) < 1e-12, 'two of three votes said yes');
  assert.ok(three[0]!.status === 'success' && three[0]!.num_judges === 3);
});

test('malformed answers fail the record; 429 and 5xx are retried; spent retries and timeouts are errors', async (t) => {
  const bad = await judgeServer(t, (_b, _n, res) => answer(res, 'I think yes'));
  const badOut = await new JudgeClient({ url: bad.url }).runner(prompt, null, 1)([rec('4')]);
  assert.equal(badOut[0]!.status, 'failed');
  assert.match((badOut[0] as { message: string }).message, /not JSON/);

  const flaky = await judgeServer(t, (_b, n, res) => {
    if (n === 1) {
      res.statusCode = 429;
      res.setHeader('retry-after', '0');
      res.end('slow down');
    } else if (n === 2) {
      res.statusCode = 503;
      res.end('busy');
    } else verdict(res, true);
  });
  const ok = await new JudgeClient({ url: flaky.url, backoffMs: 5 }).runner(prompt, null, 1)([rec('4')]);
  assert.equal(ok[0]!.status, 'success');
  assert.equal(flaky.seen.length, 3);

  const down = await judgeServer(t, (_b, _n, res) => {
    res.statusCode = 500;
    res.end('down');
  });
  const err = await new JudgeClient({ url: down.url, retries: 2, backoffMs: 5 }).runner(prompt, null, 1)([rec('4')]);
  assert.equal(err[0]!.status, 'error');
  assert.equal(down.seen.length, 3, 'one try and two retries');

  const silent = await judgeServer(t, () => undefined);
  const slow = await new JudgeClient({ url: silent.url, timeoutMs: 100, retries: 0 }).runner(prompt, null, 1)([rec('4')]);
  assert.equal(slow[0]!.status, 'error');
  assert.match((slow[0] as { message: string }).message, /no answer in 100 ms/);
});

test('a preset LLM scorer through the store writes the verdict, its explanation and num_judges', async (t) => {
  const { url } = await judgeServer(t, (_b, _n, res) => verdict(res, true, 'the answer is right'));
  const { store, projectId, logStreamId } = await openStore(t, { scoring: { judge: { url } } });
  store.catalog.setRunScorerSettings(projectId, logStreamId, { scorers: [{ name: 'correctness', num_judges: 1 }] });
  await store.logTraces(projectId, {
    log_stream_id: logStreamId,
    traces: [{ type: 'trace', name: 't', input: 'q', spans: [{ type: 'llm', name: 'l', input: 'what is 2+2?', output: '4' }] }] as never,
  });
  await store.scorers.idle();
  const page = await store.search('span', projectId, { log_stream_id: logStreamId, limit: 10 });
  const span = page.records[0] as Record<string, any>;
  assert.equal(span.metrics.correctness, 1);
  assert.equal(span.metric_info.correctness.status_type, 'success');
  assert.equal(span.metric_info.correctness.explanation, 'the answer is right');
  assert.equal(span.metric_info.correctness.num_judges, 1);
});
