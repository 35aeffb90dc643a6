// Guarantees: the deterministic scorers compute what independent implementations compute (BLEU as
// NLTK's sentence_bleu with method1 smoothing, edit distances as python-Levenshtein: values frozen in
// reference-values.json by reference-values.py), ROUGE-1 F1 as counted by hand, and every declarative
// rule gives 1/0 or a typed failure, reading input, output and references in the shapes clients log.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { sentenceBleu } from '../../src/scoring/compute/bleu.js';
import { levenshtein, levenshteinRatio } from '../../src/scoring/compute/levenshtein.js';
import { rouge1 } from '../../src/scoring/compute/rouge.js';
import { ruleRunner } from '../../src/scoring/compute/rules.js';
import { asText, plainTokens, wordTokens } from '../../src/scoring/compute/text.js';
import type { ScorableRecord } from '../../src/scoring/outcome.js';
import type { ScorerRule } from '../../src/schemas/scoring.js';

interface References {
  bleu: { candidate: string; references: string[]; value: number }[];
  levenshtein: { a: string; b: string; distance: number }[];
}

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '../..').replace(/\/dist\/?$/, '');
const refs = JSON.parse(readFileSync(join(ROOT, 'test/scoring/reference-values.json'), 'utf8')) as References;

test('BLEU agrees with NLTK on fixed cases (method1 smoothing)', () => {
  assert.ok(refs.bleu.length >= 10);
  for (const c of refs.bleu) {
    const got = sentenceBleu(
      c.references.map((r) => wordTokens(r)),
      wordTokens(c.candidate),
    );
    assert.ok(Math.abs(got - c.value) < 1e-9, `${c.candidate}: ${got} vs NLTK ${c.value}`);
  }
});

test('Levenshtein distances agree with python-Levenshtein; the ratio is 1 - distance / longest', () => {
  for (const c of refs.levenshtein) {
    assert.equal(levenshtein(c.a, c.b), c.distance, `${c.a} / ${c.b}`);
    const longest = Math.max(c.a.length, c.b.length);
    assert.equal(levenshteinRatio(c.a, c.b), longest === 0 ? 1 : 1 - c.distance / longest);
  }
});

test('ROUGE-1 F1 counted by hand', () => {
  // reference 6 tokens, candidate 6 tokens, 5 shared (the cat ... on the mat): P = R = 5/6.
  assert.ok(Math.abs(rouge1(plainTokens('The cat sat on the mat.'), plainTokens('The cat is on the mat')) - 5 / 6) < 1e-12);
  // clipped counts: "the" twice in the reference, four times in the candidate -> 2 shared of 4 and of 3.
  assert.ok(Math.abs(rouge1(plainTokens('the the cat'), plainTokens('the the the the')) - (2 * 0.5 * (2 / 3)) / (0.5 + 2 / 3)) < 1e-12);
  assert.equal(rouge1(plainTokens('abc'), plainTokens('xyz')), 0);
  assert.equal(rouge1([], plainTokens('x')), 0);
});

test('texts are read from strings, messages, message lists and content parts', () => {
  assert.equal(asText('plain'), 'plain');
  assert.equal(asText({ role: 'assistant', content: 'hi there' }), 'hi there');
  const chat = [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'first' },
    { role: 'assistant', content: 'reply' },
    { role: 'user', content: [{ type: 'text', text: 'second' }] },
  ];
  assert.equal(asText(chat, true), 'second', 'the question is the last user message');
  assert.equal(asText(chat), 'be brief\nfirst\nreply\nsecond');
  assert.equal(asText({ a: 1 }), '{"a":1}');
  assert.equal(asText(null), null);
});

const rec = (over: Partial<Record<string, unknown>>): ScorableRecord =>
  ({ id: 'r', type: 'llm', seq: 1, ...over }) as unknown as ScorableRecord;

async function run(rule: ScorerRule, records: ScorableRecord[]) {
  const deps = {
    // RE2 stands in as JavaScript's engine here (the store runs patterns in DuckDB; test/scoring/scorers checks that path).
    regexMatches: async (texts: readonly string[], pattern: string, cs: boolean) =>
      texts.map((t) => new RegExp(pattern, cs ? '' : 'i').test(t)),
  };
  return ruleRunner(rule, deps)(records);
}

const values = (outs: Awaited<ReturnType<typeof run>>) => outs.map((o) => (o.status === 'success' ? o.value : o.status));

test('declarative rules: 1/0 per record, not_applicable where the field is missing', async () => {
  const a = rec({ output: ' Paris ', dataset_output: 'paris' });
  const b = rec({ output: 'Lyon', dataset_output: 'Paris' });
  const none = rec({ dataset_output: 'Paris' });
  assert.deepEqual(values(await run({ kind: 'exact_match', case_sensitive: false }, [a, b, none])), [1, 0, 'not_applicable']);
  assert.deepEqual(values(await run({ kind: 'exact_match' }, [a])), [0], 'case-sensitive by default');
  assert.deepEqual(values(await run({ kind: 'contains', value: ['par', 'lyon'], case_sensitive: false }, [a, b])), [1, 1]);
  assert.deepEqual(values(await run({ kind: 'contains', value: ['par', 'lyon'], match: 'all', case_sensitive: false }, [a, b])), [0, 0]);
  assert.deepEqual(values(await run({ kind: 'regex', pattern: '^L.on$' }, [a, b, none])), [0, 1, 'not_applicable']);
  assert.deepEqual(
    values(await run({ kind: 'valid_json' }, [rec({ output: '{"x":1}' }), rec({ output: '{x' }), rec({ output: { x: 1 } })])),
    [1, 0, 1],
  );
  const schema = { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] };
  const js = await run({ kind: 'json_schema', schema }, [
    rec({ output: '{"x":1}' }),
    rec({ output: '{"x":"no"}' }),
    rec({ output: 'nope' }),
  ]);
  assert.deepEqual(values(js), [1, 0, 0]);
  assert.ok(js[1]!.status === 'success' && js[1]!.explanation?.includes('/x'), 'the failing path is explained');
  assert.deepEqual(values(await run({ kind: 'tool_error' }, [rec({ status_code: 200 }), rec({ status_code: 500 }), rec({})])), [
    0,
    1,
    'not_applicable',
  ]);
  const timed = [rec({ metrics: { duration_ns: 900_000_000, cost: 0.5 } }), rec({ metrics: { duration_ns: 2_000_000_000, cost: 2 } })];
  assert.deepEqual(values(await run({ kind: 'latency', max_ms: 1000 }, timed)), [1, 0]);
  assert.deepEqual(values(await run({ kind: 'cost', max: 1 }, timed)), [1, 0]);
  assert.deepEqual(values(await run({ kind: 'threshold', field: 'metrics.cost', min: 1 }, timed)), [0, 1]);
  const lev = await run({ kind: 'levenshtein', value: 'sitting' }, [rec({ output: 'kitten' })]);
  assert.ok(lev[0]!.status === 'success' && Math.abs(lev[0]!.value - (1 - 3 / 7)) < 1e-12);
  const bleu = await run({ kind: 'bleu' }, [
    rec({ output: { role: 'assistant', content: 'The cat sat on the mat.' }, dataset_output: 'The cat sat on the mat.' }),
  ]);
  assert.deepEqual(values(bleu), [1]);
});
