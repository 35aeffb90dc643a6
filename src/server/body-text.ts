// A JSON body's bytes as the text JSON.parse reads. Decoding UTF-8 with a character past Latin-1 in it
// makes a two-byte string of the whole body (2.4 MB for a 1,000-span log request with a few emoji in
// it), and a string that large is placed in memory of its own each time: on the test machines its
// first touch cost more than the parse (8.4 ms a body against JSON.parse's 3). So a body that is
// mostly ASCII is sent to JSON.parse as a one-byte string, each character past ASCII written as the
// \u escape JSON reads as that same character: JSON allows such characters only inside strings, where
// the escape means the character. Anything this does not decode exactly as Buffer.toString('utf8')
// would (a malformed sequence, a backslash just before the character, a body whose escapes would grow
// it past an eighth) goes through toString('utf8') instead.
import { isAscii } from 'node:buffer';
import { ScratchBuffer } from '../storage/fs-util.js';

/** Where escaped bodies are written (kept for bodies up to 8 MB; a larger one gets a buffer of its own). */
const escaped = new ScratchBuffer(8 << 20);

const HEX = new Uint8Array([...'0123456789abcdef'].map((c) => c.charCodeAt(0)));

/** The body's text, without a leading byte order mark (which is not JSON: Fastify's parser drops it too). */
export function bodyText(body: Buffer): string {
  const from = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  if (isAscii(body)) return body.toString('latin1', from);
  return escapedText(body, from) ?? body.toString('utf8', from);
}

/** The body from `from` with every character past ASCII as a \u escape; null when that is not exact (see above). */
function escapedText(body: Buffer, from: number): string | null {
  const n = body.length;
  const room = n - from + ((n - from) >>> 3) + 16;
  const out = escaped.get(room);
  // The body as 32-bit words from its first 4-byte boundary: a word without a high bit is four ASCII bytes.
  const base = from + ((4 - ((body.byteOffset + from) & 3)) & 3);
  const words = base < n ? new Uint32Array(body.buffer, body.byteOffset + base, (n - base) >>> 2) : new Uint32Array(0);
  let o = 0;
  let run = from; // the ASCII bytes not yet copied start here
  let i = from;
  for (;;) {
    i = nextPastAscii(body, words, base, i);
    if (o + (i - run) + (i < n ? 12 : 0) > room) return null;
    body.copy(out, o, run, i);
    o += i - run;
    if (i >= n) break;
    // A backslash before it would start an escape of its own (`\é` is not JSON; `\\u00e9` would be).
    if (o > 0 && out[o - 1] === 0x5c) return null;
    const b = body[i]!;
    const len = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
    if (b < 0xc2 || b > 0xf4) return null; // past the end, body[i + k] is undefined: not a continuation
    let cp = b & (0x7f >> len);
    for (let k = 1; k < len; k++) {
      const c = body[i + k]!;
      if ((c & 0xc0) !== 0x80) return null;
      cp = (cp << 6) | (c & 0x3f);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    if (len === 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) return null;
    if (len === 4 && (cp < 0x10000 || cp > 0x10ffff)) return null;
    if (cp >= 0x10000) {
      o = writeEscape(out, o, 0xd800 + ((cp - 0x10000) >> 10));
      o = writeEscape(out, o, 0xdc00 + ((cp - 0x10000) & 0x3ff));
    } else o = writeEscape(out, o, cp);
    i += len;
    run = i;
  }
  return Buffer.from(out.buffer, out.byteOffset, o).toString('latin1');
}

/** The first byte at or after `i` past ASCII (or the body's length), skipping whole words of `words` (from `base`) where it can. */
function nextPastAscii(body: Buffer, words: Uint32Array, base: number, i: number): number {
  while (i < body.length) {
    const k0 = (i - base) >> 2;
    if (i >= base && ((i - base) & 3) === 0 && k0 < words.length) {
      let k = k0;
      while (k < words.length && (words[k]! & 0x80808080) === 0) k++;
      if (k > k0) {
        i = base + k * 4;
        continue;
      }
    }
    if (body[i]! >= 0x80) return i;
    i++;
  }
  return body.length;
}

/** Writes a backslash, u and the UTF-16 unit in four hex digits at `o`; returns the position after. */
function writeEscape(out: Uint8Array, o: number, unit: number): number {
  out[o] = 0x5c;
  out[o + 1] = 0x75;
  out[o + 2] = HEX[(unit >> 12) & 15]!;
  out[o + 3] = HEX[(unit >> 8) & 15]!;
  out[o + 4] = HEX[(unit >> 4) & 15]!;
  out[o + 5] = HEX[unit & 15]!;
  return o + 6;
}
