// CRC-32 (IEEE) of a byte range: zlib's native one where Node has it (20.15+), else a table in JS.
import * as zlib from 'node:zlib';

// Node's types declare zlib.crc32 on every version; before 20.15 it is absent at run time.
const native: ((data: Uint8Array, value?: number) => number) | undefined = typeof zlib.crc32 === 'function' ? zlib.crc32 : undefined;

let table: Uint32Array | null = null;

function crc32Js(data: Uint8Array, prev = 0): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = (prev ^ 0xffffffff) >>> 0;
  for (let i = 0; i < data.length; i++) crc = table[(crc ^ data[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** `prev`: the CRC of the bytes before `data`, to checksum a file a chunk at a time. */
export function crc32(data: Uint8Array, prev = 0): number {
  return native ? native(data, prev) >>> 0 : crc32Js(data, prev);
}

/** The parts joined, followed by their CRC-32 (little-endian): the layout of our index files. */
export function withCrc(parts: readonly Uint8Array[]): Uint8Array {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(total + 4);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  new DataView(out.buffer).setUint32(total, crc32(out.subarray(0, total)), true);
  return out;
}

export { crc32Js };
