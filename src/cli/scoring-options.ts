// `tracelake serve`'s scoring flags: the LLM judge endpoint (its key only from the environment, never
// a flag: flags show in process lists), the Python runner switch, and online scoring off.
import type { ScoringOptions } from '../scoring/scorers.js';
import { env, positiveInt } from './options.js';

export const SCORING_FLAGS = {
  'judge-url': { type: 'string' },
  'judge-model': { type: 'string' },
  'judge-models': { type: 'string' },
  'judge-concurrency': { type: 'string' },
  'judge-timeout': { type: 'string' },
  'python-scorers': { type: 'boolean' },
  'no-online-scoring': { type: 'boolean' },
} as const;

type Values = Partial<Record<keyof typeof SCORING_FLAGS, string | boolean>>;

/** `name=model,name=model` (a scorer's model_name to the endpoint's model). */
function modelMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const [from, to] = pair.split('=').map((s) => s.trim());
    if (!from || !to) throw new Error(`--judge-models: expected name=model pairs separated by commas, got "${pair}"`);
    out[from] = to;
  }
  return out;
}

export function scoringOptions(values: Values): ScoringOptions {
  const url = (values['judge-url'] as string | undefined) ?? env('TRACELAKE_JUDGE_URL');
  const key = env('TRACELAKE_JUDGE_API_KEY');
  const model = (values['judge-model'] as string | undefined) ?? env('TRACELAKE_JUDGE_MODEL');
  const models = values['judge-models'] as string | undefined;
  const out: ScoringOptions = {};
  if (values['no-online-scoring'] === true) out.online = false;
  if (values['python-scorers'] === true) out.python = true;
  if (url) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`--judge-url: not a URL: ${url}`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--judge-url: http or https, not ${parsed.protocol}`);
    out.judge = {
      url: url.replace(/\/+$/, ''),
      ...(key ? { apiKey: key } : {}),
      ...(model ? { model } : {}),
      ...(models ? { models: modelMap(models) } : {}),
      ...(values['judge-concurrency'] !== undefined
        ? { concurrency: positiveInt('--judge-concurrency', values['judge-concurrency'] as string, 4) }
        : {}),
      ...(values['judge-timeout'] !== undefined
        ? { timeoutMs: positiveInt('--judge-timeout', values['judge-timeout'] as string, 60_000) }
        : {}),
    };
  }
  return out;
}
