// Guarantees: the server's JSON body parser refuses keys that poison prototypes (an own "__proto__",
// escaped or not, or a "constructor" object with a "prototype") with the answer invalid JSON gets, and
// writes nothing; ordinary keys named so (a string "constructor", a "prototype" elsewhere), a byte
// order mark and bodies a thousand levels deep are accepted; deeper ones are refused with the path.
// Text arrives the same whether sent as UTF-8 or as ASCII with \u escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poisonsPrototypes } from '../../src/schemas/check.js';
import { startServer } from '../support/helpers.js';

test('poisoning keys answer 422 as invalid JSON and write nothing; look-alikes are logged', async (t) => {
  const s = await startServer(t);
  const path = `/projects/${s.projectId}/traces`;
  const head = `{"log_stream_id":"${s.logStreamId}","traces":[{"input":"q","spans":[{"type":"tool","input":`;
  const poisoned = [
    `${head}{"__proto__":{"polluted":"1"}}}]}]}`,
    `${head}{"\\u005f_proto__":{"polluted":"1"}}}]}]}`,
    `${head}{"a":"b"}}],"__proto__":{"x":"y"}}]}`,
    `${head}{"constructor":{"prototype":{"polluted":"1"}}}}]}]}`,
  ];
  for (const body of poisoned) {
    const r = await s.call('POST', path, body);
    assert.equal(r.status, 422, body);
    assert.deepEqual(r.body.detail[0].loc, ['body'], body);
    assert.equal(r.body.detail[0].type, 'json_invalid', body);
  }
  const fine = [
    `${head}{"constructor":"a string","prototype":"p"}}]}]}`,
    `${head}{"constructor":{"name":"not a prototype"}}}]}]}`,
    `\ufeff${head}{"proto":"x"}}]}]}`,
  ];
  for (const body of fine) {
    const r = await s.call('POST', path, body);
    assert.equal(r.status, 200, `${body}: ${JSON.stringify(r.body)}`);
  }
  const count = await s.call('POST', `/projects/${s.projectId}/traces/count`, { log_stream_id: s.logStreamId });
  assert.deepEqual(count.body, { total_count: fine.length });
  assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
});

test('nesting: a thousand levels pass the parser and the schema check; one more is refused with its path', async (t) => {
  const s = await startServer(t);
  const path = `/projects/${s.projectId}/traces`;
  // The body, its traces list and a trace: 3 levels above the lists nested in its input.
  const nested = (levels: number) => `{"log_stream_id":"${s.logStreamId}","traces":[{"input":${'['.repeat(levels)}${']'.repeat(levels)}}]}`;
  const ok = await s.call('POST', path, nested(997));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  const deep = await s.call('POST', path, nested(998));
  assert.equal(deep.status, 422);
  assert.deepEqual(deep.body.detail[0].loc, ['body', 'traces', 0, 'input']);
  assert.equal(deep.body.detail[0].type, 'too_deep');
});

test('text sent as UTF-8 and as ASCII with \\u escapes is stored the same', async (t) => {
  const s = await startServer(t);
  const text = 'héllo ✓ 🎉 — ok';
  const body = (input: string) => `{"log_stream_id":"${s.logStreamId}","traces":[{"input":${input}}]}`;
  const utf8 = await s.call('POST', `/projects/${s.projectId}/traces`, body(JSON.stringify(text)));
  const escaped = JSON.stringify(text).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  assert.ok(/^[\x20-\x7e]+$/.test(escaped));
  const ascii = await s.call('POST', `/projects/${s.projectId}/traces`, body(escaped));
  assert.equal(utf8.status, 200, JSON.stringify(utf8.body));
  assert.equal(ascii.status, 200, JSON.stringify(ascii.body));
  const page = await s.call('POST', `/projects/${s.projectId}/traces/search`, { log_stream_id: s.logStreamId });
  assert.deepEqual(
    page.body.records.map((r: { input: unknown }) => r.input),
    [text, text],
  );
});

test('poisonsPrototypes finds a poisoning key at any depth, in lists too, and only as a key', () => {
  assert.equal(poisonsPrototypes(JSON.parse('{"a":[{"b":{"__proto__":1}}]}')), true);
  assert.equal(poisonsPrototypes(JSON.parse('[[{"constructor":{"prototype":null}}]]')), true);
  assert.equal(poisonsPrototypes(JSON.parse('{"a":["__proto__","constructor"],"b":{"constructor":[]}}')), false);
  assert.equal(poisonsPrototypes(JSON.parse('"__proto__"')), false);
  assert.equal(poisonsPrototypes(null), false);
});
