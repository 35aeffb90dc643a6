// The judge: an OpenAI-compatible chat-completions endpoint the operator names (--judge-url). Each
// vote is one request asking for structured JSON ({ explanation, verdict }) under a strict JSON
// schema; requests that meet 429 or a 5xx, or time out, are retried with exponential back-off
// (honouring Retry-After); a malformed answer is a failed vote. A record's score is the share of its
// valid votes that said yes (num_judges votes, averaged); with none valid it fails, and with the
// endpoint unreachable after the retries it is an error.
import { asText } from '../compute/text.js';
import type { Outcome, Runner, ScorableRecord } from '../outcome.js';
import { Limiter } from './limiter.js';
import { SYSTEM_PROMPT, type JudgePrompt } from './prompts.js';

export interface JudgeOptions {
  /** Base URL of the API, e.g. http://127.0.0.1:8000/v1 (requests go to {url}/chat/completions). */
  url: string;
  /** Bearer token (the CLI reads it from TRACELAKE_JUDGE_API_KEY); none when absent. */
  apiKey?: string;
  /** The endpoint's model for a scorer's model_name; absent names fall back to `model`. */
  models?: Record<string, string>;
  /** The model asked when a scorer's model_name is not in `models` (default: the model_name itself). */
  model?: string;
  /** Requests in flight at once (default 4). */
  concurrency?: number;
  /** Milliseconds one request may take (default 60,000). */
  timeoutMs?: number;
  /** Retries after a 429, a 5xx, a timeout or a network error (default 3). */
  retries?: number;
  /** First back-off in ms, doubled each retry (default 500). */
  backoffMs?: number;
}

const VERDICT_SCHEMA = {
  type: 'object',
  properties: { explanation: { type: 'string' }, verdict: { type: 'boolean' } },
  required: ['explanation', 'verdict'],
  additionalProperties: false,
};

class Unreachable extends Error {}

const MAX_FIELD_CHARS = 20_000;

function clip(s: string): string {
  return s.length > MAX_FIELD_CHARS ? `${s.slice(0, MAX_FIELD_CHARS)}\n[... cut at ${MAX_FIELD_CHARS} characters]` : s;
}

/** The user message for one record: the question, then the fields the prompt shows. */
export function judgeMessage(prompt: JudgePrompt, r: ScorableRecord): string | null {
  const parts = [`Question: ${prompt.question}`];
  let shown = 0;
  for (const f of prompt.shows) {
    const v =
      f === 'input' ? asText(r.input) : f === 'output' ? asText(r.output) : f === 'reference' ? asText(r.dataset_output) : asText(r.tools);
    if (v === null || v === '') continue;
    shown++;
    parts.push(`${f === 'reference' ? 'Reference answer' : f[0]!.toUpperCase() + f.slice(1)}:\n${clip(v)}`);
  }
  return shown === 0 ? null : parts.join('\n\n');
}

export class JudgeClient {
  readonly #o: Required<Omit<JudgeOptions, 'apiKey' | 'model'>> & Pick<JudgeOptions, 'apiKey' | 'model'>;
  readonly #limit: Limiter;

  constructor(options: JudgeOptions) {
    this.#o = {
      url: options.url.replace(/\/+$/, ''),
      apiKey: options.apiKey,
      model: options.model,
      models: options.models ?? {},
      concurrency: options.concurrency ?? 4,
      timeoutMs: options.timeoutMs ?? 60_000,
      retries: options.retries ?? 3,
      backoffMs: options.backoffMs ?? 500,
    };
    this.#limit = new Limiter(this.#o.concurrency);
  }

  /** The endpoint's model for a scorer's model name. */
  modelFor(modelName: string | null): string {
    return (modelName !== null ? this.#o.models[modelName] : undefined) ?? this.#o.model ?? modelName ?? 'gpt-4.1-mini';
  }

  /** A runner asking `votes` judges `prompt` about each record. */
  runner(prompt: JudgePrompt, modelName: string | null, votes: number): Runner {
    const model = this.modelFor(modelName);
    const n = Math.max(1, Math.min(10, votes));
    return (records) => Promise.all(records.map((r) => this.#score(prompt, model, n, r)));
  }

  async #score(prompt: JudgePrompt, model: string, votes: number, r: ScorableRecord): Promise<Outcome> {
    const message = judgeMessage(prompt, r);
    if (message === null)
      return { status: 'not_applicable', message: `the record has none of what the judge reads (${prompt.shows.join(', ')})` };
    const results = await Promise.all(
      Array.from({ length: votes }, () =>
        this.#limit.run(() => this.#vote(model, message, votes > 1)).catch((err: unknown) => err as Error),
      ),
    );
    const valid = results.filter((x): x is { verdict: boolean; explanation: string } => !(x instanceof Error));
    if (valid.length === 0) {
      const unreachable = results.find((x) => x instanceof Unreachable);
      if (unreachable) return { status: 'error', message: `the judge could not be reached: ${(unreachable as Error).message}` };
      return { status: 'failed', message: `no judge answered as asked: ${(results[0] as Error).message}` };
    }
    const yes = valid.filter((v) => v.verdict).length;
    const value = yes / valid.length;
    const agreeing = valid.find((v) => v.verdict === value >= 0.5) ?? valid[0]!;
    return {
      status: 'success',
      value,
      explanation: agreeing.explanation,
      num_judges: valid.length,
      model_alias: `tracelake judge (${model})`,
    };
  }

  async #vote(model: string, message: string, varied: boolean): Promise<{ verdict: boolean; explanation: string }> {
    const body = JSON.stringify({
      model,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: message },
      ],
      temperature: varied ? 0.7 : 0,
      response_format: { type: 'json_schema', json_schema: { name: 'tracelake_verdict', strict: true, schema: VERDICT_SCHEMA } },
    });
    let wait = this.#o.backoffMs;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${this.#o.url}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(this.#o.apiKey ? { authorization: `Bearer ${this.#o.apiKey}` } : {}) },
          body,
          signal: AbortSignal.timeout(this.#o.timeoutMs),
        });
      } catch (err) {
        const why = (err as Error).name === 'TimeoutError' ? `no answer in ${this.#o.timeoutMs} ms` : (err as Error).message;
        if (attempt >= this.#o.retries) throw new Unreachable(why);
        await sleep(wait);
        wait *= 2;
        continue;
      }
      if (res.status === 429 || res.status >= 500) {
        await res.body?.cancel();
        if (attempt >= this.#o.retries) throw new Unreachable(`HTTP ${res.status} after ${attempt + 1} attempts`);
        const after = Number(res.headers.get('retry-after'));
        await sleep(Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 60_000) : wait);
        wait *= 2;
        continue;
      }
      const text = await res.text();
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
      return parseVerdict(text);
    }
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The verdict in a chat-completions answer, or an error saying what was wrong with it. */
export function parseVerdict(text: string): { verdict: boolean; explanation: string } {
  let content: unknown;
  try {
    content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
  } catch {
    throw new Error('the answer is not JSON');
  }
  if (typeof content !== 'string') throw new Error('the answer has no message content');
  let v: unknown;
  try {
    v = JSON.parse(content);
  } catch {
    throw new Error(`the verdict is not JSON: ${content.slice(0, 100)}`);
  }
  const o = v as { verdict?: unknown; explanation?: unknown };
  if (typeof o !== 'object' || o === null || typeof o.verdict !== 'boolean')
    throw new Error(`the verdict lacks a boolean "verdict": ${content.slice(0, 100)}`);
  return { verdict: o.verdict, explanation: typeof o.explanation === 'string' ? o.explanation : '' };
}
