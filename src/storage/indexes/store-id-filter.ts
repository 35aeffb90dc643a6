// One blocked Bloom filter over the id hashes of many segments (every sealed segment of the store, once
// built): an id it does not hold is new to all of them after one cache line, however many segments
// there are. It only ever gains bits: a merge's output holds a subset of its inputs' ids and a delete
// removes none, so the ids of segments merged away or deleted stay in it as false hits (the caller
// confirms every hit in the segments themselves). It is rebuilt, smaller and cleaner, when it fills.
// Saved as a checkpoint file that names the segments it covers, so open reads it instead of every id.
import { open, rename, rm } from 'node:fs/promises';
import { readSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDir, withFile } from '../fs-util.js';
import { blockHas, PROBES, type Probe } from './id-filter.js';

/** Bits per id of room it is sized for (with GROWTH: 10 bits per id it starts with, ~1% false hits; ~2.6% when rebuilt). */
const BITS_PER_KEY = 8;
/** Room for ids sealed after a (re)build, as a multiple of the ids it starts with. */
const GROWTH = 1.25;
/**
 * Share of bits set at which it is rebuilt: the fill of 8 bits per id (measured: 10 bits per id fill
 * 0.58, 9.5 fill 0.61, 8 fill 0.71). At 0.6 a filter rebuilt for its ids was full again 5% later, and
 * a store logging 1M spans from empty rebuilt it at almost every seal, reading every segment's ids.
 */
export const FULL = 0.7;
/** Smallest size, in ids. */
const MIN_KEYS = 1 << 16;

/** Bytes written per step of a save. */
const SAVE_PIECE = 8 << 20;

const MAGIC = 0x53494654; // "TFIS"
const VERSION = 1;
const HEADER = 24;

export const CHECKPOINT = 'id-filter.bin';

export class StoreIdFilter {
  readonly blocks: number;
  /** The bits, or null until first asked (a loaded checkpoint reads them then). */
  #bits: Uint32Array | null;
  #read: (() => Uint32Array | null) | null;
  /** Bits set (kept as bits are added: the fill decides when to rebuild). */
  #set: number;
  /** Segments whose every hash is in it: key -> hashes of its `.ids` file. */
  readonly covered = new Map<string, number>();

  /** `bits`: the bits, or how to read them when first asked (null then: they could not be read). */
  constructor(blocks: number, bits: Uint32Array | (() => Uint32Array | null) = new Uint32Array(blocks * 16), set = 0) {
    this.blocks = blocks;
    this.#bits = typeof bits === 'function' ? null : bits;
    this.#read = typeof bits === 'function' ? bits : null;
    this.#set = set;
  }

  /**
   * The bits, read on first use: a store that is only asked questions never holds them (at 100M
   * spans, 144 MiB), and the first write reads them. If the checkpoint cannot be read by then, every
   * bit is set: every id is a hit (each confirmed in the segments' own filters on disk, slower but
   * right) and the filter is full, so it is rebuilt in the background.
   */
  get bits(): Uint32Array {
    if (this.#bits === null) {
      const read = this.#read?.() ?? null;
      this.#read = null;
      if (read === null) this.#set = this.blocks * 512;
      this.#bits = read ?? new Uint32Array(this.blocks * 16).fill(0xffffffff);
    }
    return this.#bits;
  }

  /** Whether the bits are in memory (tests, memory reports). */
  get loaded(): boolean {
    return this.#bits !== null;
  }

  /** An empty filter with room for `keys` ids and growth after them. */
  static sized(keys: number): StoreIdFilter {
    return new StoreIdFilter(Math.ceil((Math.max(MIN_KEYS, keys * GROWTH) * BITS_PER_KEY) / 512));
  }

  /** Bytes of bits held in memory. */
  get bytes(): number {
    return this.#bits?.byteLength ?? 0;
  }

  /** Share of bits set. */
  get fill(): number {
    return this.#set / (this.blocks * 512);
  }

  /** Whether its false hits have grown enough to rebuild it. */
  get full(): boolean {
    return this.fill > FULL;
  }

  add(hashes: ArrayLike<number>, probeOf: (h: number) => Probe): void {
    const bits = this.bits;
    for (let i = 0; i < hashes.length; i++) {
      const p = probeOf(hashes[i]!);
      const base = Math.min(this.blocks - 1, Math.floor(p.at * this.blocks)) * 16;
      for (let k = 0; k < PROBES; k++) {
        const w = base + p.words[k]!;
        const before = bits[w]!;
        const after = before | p.masks[k]!;
        if (after !== before) {
          bits[w] = after;
          this.#set++;
        }
      }
    }
  }

  /** False: no covered segment holds the hash. */
  hasProbe(p: Probe): boolean {
    return blockHas(this.bits, this.blocks, p);
  }

  /**
   * Writes the checkpoint (`dir/id-filter.bin`): to a temporary file, fsynced, then renamed over the
   * old one, so a crash leaves the old or the new file whole. Written from the live bits without a
   * copy: bits added during the write are ids of segments it does not name, harmless extra hits.
   * False (nothing written) when `stopped` turns true on the way.
   */
  async save(dir: string, stopped: () => boolean = () => false): Promise<boolean> {
    const names = new TextEncoder().encode(JSON.stringify([...this.covered]));
    const pad = (8 - ((HEADER + names.byteLength) % 8)) % 8;
    const head = new Uint8Array(HEADER + names.byteLength + pad);
    const view = new DataView(head.buffer);
    view.setUint32(0, MAGIC, true);
    view.setUint32(4, VERSION, true);
    view.setUint32(8, this.blocks, true);
    view.setFloat64(12, this.#set, true);
    view.setUint32(20, names.byteLength, true);
    head.set(names, HEADER);
    const path = join(dir, CHECKPOINT);
    const tmp = `${path}.tmp-${process.pid}`;
    const fh = await open(tmp, 'w');
    const bytes = new Uint8Array(this.bits.buffer, this.bits.byteOffset, this.bits.byteLength);
    let done = false;
    try {
      await fh.write(head);
      // In pieces, so a closing store waits for one piece, not the whole file.
      for (let at = 0; at < bytes.byteLength; at += SAVE_PIECE) {
        if (stopped()) return false;
        await fh.write(bytes.subarray(at, Math.min(bytes.byteLength, at + SAVE_PIECE)));
      }
      if (stopped()) return false;
      await fh.sync();
      done = true;
    } finally {
      await fh.close();
      if (!done) await rm(tmp, { force: true });
    }
    await rename(tmp, path);
    fsyncDir(dir);
    return true;
  }

  /**
   * The checkpoint of `dir`, or null when missing or not one (of this version). Only its header is read
   * now; the bits are read (straight into place, no second copy) when first asked.
   */
  static load(dir: string): StoreIdFilter | null {
    const path = join(dir, CHECKPOINT);
    const head = readHeader(path);
    if (head === null) return null;
    const f = new StoreIdFilter(head.blocks, () => readBits(path, head), head.set);
    for (const [key, n] of head.names) f.covered.set(key, n);
    return f;
  }
}

interface Header {
  blocks: number;
  set: number;
  /** Byte offset of the bits. */
  at: number;
  names: [string, number][];
}

/** The checkpoint's header and covered segments, or null when missing, cut or not one of this version. */
function readHeader(path: string): Header | null {
  return withFile(path, headerOf);
}

/** The header at the start of an open checkpoint file of `size` bytes (readHeader). */
function headerOf(fd: number, size: number): Header | null {
  const head = new Uint8Array(HEADER);
  if (size < HEADER || readSync(fd, head, 0, HEADER, 0) !== HEADER) return null;
  const view = new DataView(head.buffer);
  if (view.getUint32(0, true) !== MAGIC || view.getUint32(4, true) !== VERSION) return null;
  const blocks = view.getUint32(8, true);
  const set = view.getFloat64(12, true);
  const namesBytes = view.getUint32(20, true);
  const at = HEADER + namesBytes + ((8 - ((HEADER + namesBytes) % 8)) % 8);
  if (blocks < 1 || size !== at + blocks * 64) return null;
  const nameBuf = new Uint8Array(namesBytes);
  if (readSync(fd, nameBuf, 0, namesBytes, HEADER) !== namesBytes) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(nameBuf));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const names: [string, number][] = [];
  for (const e of parsed) if (Array.isArray(e) && typeof e[0] === 'string' && typeof e[1] === 'number') names.push([e[0], e[1]]);
  return { blocks, set, at, names };
}

/** The bits of the checkpoint whose header was `head`, or null when the file is no longer that one. */
function readBits(path: string, head: Header): Uint32Array | null {
  return withFile(path, (fd, size) => {
    const again = headerOf(fd, size);
    if (again === null || again.blocks !== head.blocks || again.set !== head.set || size !== head.at + head.blocks * 64) return null;
    const bits = new Uint32Array(head.blocks * 16);
    const bytes = new Uint8Array(bits.buffer);
    for (let done = 0; done < bytes.byteLength; ) {
      const n = readSync(fd, bytes, done, Math.min(1 << 26, bytes.byteLength - done), head.at + done);
      if (n <= 0) return null;
      done += n;
    }
    return bits;
  });
}
