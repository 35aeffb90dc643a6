// Guarantees: a body's text as bodyText gives it parses exactly as its UTF-8 decoding does (the same
// value, or both refused), for ASCII, Latin-1, other BMP and astral characters, a byte order mark,
// escapes next to such characters, malformed UTF-8 and random bytes; characters past ASCII in a mostly
// ASCII body arrive as \u escapes (the one-byte text), and a body mostly past ASCII is decoded as is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyText } from '../../src/server/body-text.js';

/** JSON.parse's outcome on a text: the value, or that it threw. */
function outcome(text: () => string): unknown {
  try {
    return { value: JSON.parse(text()) as unknown };
  } catch {
    return 'refused';
  }
}

/** The body parses through bodyText as through toString('utf8') less a leading U+FEFF (the parser's contract before). */
function same(bytes: Buffer, label: string): void {
  const plain = () => {
    const t = bytes.toString('utf8');
    return t.charCodeAt(0) === 0xfeff ? t.slice(1) : t;
  };
  assert.deepEqual(
    outcome(() => bodyText(bytes)),
    outcome(plain),
    label,
  );
}

test('valid JSON with characters past ASCII parses to the same value', () => {
  const texts = [
    '{"a":"plain"}',
    '{"a":"café","b":["naïve","Ω","日本語"]}',
    '{"emoji":"👋🏽 done","astral":"𝄞"}',
    '{"é":1,"key ✓":{"nested":"ü"}}',
    '{"esc":"\\n\\té\\"ß\\\\","u":"\\u00e9é"}',
    '\ufeff{"bom":"é"}',
    '\ufeff{"bom":"ascii"}',
    '["\u0080","\u07ff","\u0800","\uffff","\u{10000}","\u{10ffff}"]',
    `{"long":"${'x'.repeat(5000)}é${'y'.repeat(3)}"}`,
  ];
  for (const t of texts) same(Buffer.from(t, 'utf8'), t.slice(0, 40));
});

test('a character past ASCII is sent to JSON.parse as its \\u escape', () => {
  assert.equal(bodyText(Buffer.from('{"a":"café 👋"}', 'utf8')), '{"a":"caf\\u00e9 \\ud83d\\udc4b"}');
  assert.equal(bodyText(Buffer.from('\ufeff{"a":1}', 'utf8')), '{"a":1}');
  // Mostly past ASCII: decoded as it is (escapes would triple it).
  assert.equal(bodyText(Buffer.from('["日本語の文章"]', 'utf8')), '["日本語の文章"]');
});

test('bodies that are not JSON or not UTF-8 are refused or decoded as toString does', () => {
  const cases: [string, number[]][] = [
    ['backslash before é (not an escape)', [...Buffer.from('{"a":"\\'), 0xc3, 0xa9, ...Buffer.from('"}')]],
    ['escaped backslash before é', [...Buffer.from('{"a":"\\\\'), 0xc3, 0xa9, ...Buffer.from('"}')]],
    ['é outside a string', [...Buffer.from('{"a":1'), 0xc3, 0xa9, ...Buffer.from('}')]],
    ['lone continuation byte', [...Buffer.from('{"a":"'), 0x80, ...Buffer.from('"}')]],
    ['cut sequence', [...Buffer.from('{"a":"'), 0xe6, 0x97, ...Buffer.from('"}')]],
    ['cut at the end', [...Buffer.from('{"a":"x"}'), 0xe6]],
    ['overlong slash', [...Buffer.from('{"a":"'), 0xc0, 0xaf, ...Buffer.from('"}')]],
    ['overlong three bytes', [...Buffer.from('{"a":"'), 0xe0, 0x80, 0xaf, ...Buffer.from('"}')]],
    ['surrogate', [...Buffer.from('{"a":"'), 0xed, 0xa0, 0x80, ...Buffer.from('"}')]],
    ['past U+10FFFF', [...Buffer.from('{"a":"'), 0xf4, 0x90, 0x80, 0x80, ...Buffer.from('"}')]],
    ['0xff', [...Buffer.from('{"a":"'), 0xff, ...Buffer.from('"}')]],
    ['only a byte order mark', [0xef, 0xbb, 0xbf]],
  ];
  for (const [label, bytes] of cases) same(Buffer.from(bytes), label);
});

test('random bytes inside and around strings: the same outcome as toString', () => {
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const pool = [
    0x22, 0x5c, 0x75, 0x30, 0x61, 0x7b, 0x7d, 0x3a, 0x2c, 0x80, 0xbf, 0xc2, 0xc3, 0xdf, 0xe0, 0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xff,
  ];
  let parsed = 0;
  for (let k = 0; k < 4000; k++) {
    const mid: number[] = [];
    for (let j = rnd(8); j > 0; j--) mid.push(rnd(3) === 0 ? rnd(256) : pool[rnd(pool.length)]!);
    // Most cases keep the bytes inside a string so that many of them are valid JSON.
    const bytes = Buffer.from([...Buffer.from('{"k":"ab'), ...mid, ...Buffer.from('cd"}')]);
    // A Buffer at an odd offset of a larger one, as a request's body can be.
    const shifted = Buffer.alloc(bytes.length + 3);
    bytes.copy(shifted, k % 4);
    const view = shifted.subarray(k % 4, (k % 4) + bytes.length);
    same(view, `case ${k}: ${bytes.toString('hex')}`);
    if (typeof outcome(() => bodyText(view)) === 'object') parsed++;
  }
  assert.ok(parsed > 500, `some random cases are valid JSON (${parsed})`);
});
