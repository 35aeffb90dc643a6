// The text index of a segment: per row group and per text column (name, input, output), the set of
// trigrams of the lowercased text, kept beside the segment as `seg-N.tix`. A `contains` needle (either
// case) can only match in a row group whose set holds every trigram of the lowercased needle, so reads
// skip the others (time-profile.ts). Exactness rests on facts of DuckDB's lower(): it maps each code
// point on its own (so lower(text) contains lower(needle) whenever text contains needle, in either
// case); on ASCII it is A-Z -> a-z; and the only other code points it maps into ASCII are U+0130
// (to i) and U+212A, the Kelvin sign (to k) (test/storage/indexes/text-index.test.ts asks DuckDB about every
// code point). Only runs of three such characters are indexed and looked up, lowered here by that
// mapping (DuckDB's lower() over the text cost more than the rest of the build). A needle with no
// such run, a missing index or a missing column reads everything.
//
// Like ClickHouse's ngrambf_v1, but exact rather than a Bloom filter: an ASCII trigram is a 21-bit
// key, so a row group's set is a sorted key list (delta varints) or, when denser, a 2^21-bit bitmap
// (256 KiB at most; a 32k-row group holds megabytes of text). No false positives beyond the trigrams.
import { readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Connection } from '../../db/database.js';
import type { TextRequirement } from '../../query/text-needs.js';
import { crc32 } from '../crc32.js';
import { fsyncDir, fsyncFile, fsyncPathAsync } from '../fs-util.js';
import { FileSink } from './file-sink.js';
import { RunFile, type RunSections } from './posting-runs.js';
import { hasSorted } from './sorted-search.js';
import { TokenBuilder, writeTokenHead } from './token-builder.js';
import { loadTokenIndex, tokenFileRows, type TokenIndex } from './token-index.js';
import { indexChecked } from './unchecked-indexes.js';
import { ident, param, sql } from '../../query/sql.js';

export const TEXT_COLUMNS = ['name', 'input', 'output'] as const;
export type TextColumn = (typeof TEXT_COLUMNS)[number];

export const TIX_MAGIC = 0x3158_4954; // "TIX1"
const MAGIC = TIX_MAGIC;
const KEY_BITS = 21;
/** 32-bit words of a row group's trigram bitmap. */
export const WORDS = (1 << KEY_BITS) / 32;

/** One row group's trigram set for one column: sorted keys, or a bitmap of 2^21 bits. */
export type KeySet = { keys: Uint32Array } | { bits: Uint32Array };

export interface TextIndex {
  /** Rows per row group (checked against the manifest: a stale index is not used). */
  readonly rows: readonly number[];
  /** sets[rowGroup][column] */
  readonly sets: readonly (readonly KeySet[])[];
}

export function textIndexPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.tix');
}

export function tokenIndexPath(parquetPath: string): string {
  return parquetPath.replace(/\.parquet$/, '.tok');
}

/** Keys of the ASCII trigrams of a (lowercased) needle; empty when it has none (then nothing is skipped). */
export function needleKeys(needle: string): number[] {
  const out = new Set<number>();
  let key = 0;
  let run = 0;
  for (let i = 0; i < needle.length; i++) {
    let c = needle.charCodeAt(i);
    if (c === 0x130) c = 0x69;
    else if (c === 0x212a) c = 0x6b;
    else if (c >= 128) {
      run = 0;
      continue;
    }
    if (c >= 65 && c <= 90) c += 32;
    key = ((key << 7) | c) & 0x1fffff;
    if (++run >= 3) out.add(key);
  }
  return [...out];
}

/** Adds the trigrams of UTF-8 text, lowered as DuckDB does, to a bitmap (other characters end a run). */
function addText(text: Uint8Array, bits: Uint32Array): void {
  let key = 0;
  let run = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    let c = text[i]!;
    if (c >= 128) {
      if (c === 0xc4 && text[i + 1] === 0xb0) {
        c = 0x69; // U+0130
        i += 1;
      } else if (c === 0xe2 && text[i + 1] === 0x84 && text[i + 2] === 0xaa) {
        c = 0x6b; // U+212A
        i += 2;
      } else {
        run = 0;
        continue;
      }
    } else if (c >= 65 && c <= 90) c += 32;
    key = ((key << 7) | c) & 0x1fffff;
    if (++run >= 3) bits[key >>> 5]! |= 1 << (key & 31);
  }
}

function has(set: KeySet, key: number): boolean {
  if ('bits' in set) return (set.bits[key >>> 5]! & (1 << (key & 31))) !== 0;
  return hasSorted(set.keys, key);
}

export type { TextRequirement };

/** A requirement as trigram keys: a column must hold all `keys`, or one alternative must hold entirely. */
export type TextNeed =
  | { readonly column: TextColumn; readonly keys: readonly number[] }
  | { readonly any: readonly (readonly TextNeed[])[] };

/** Needs of a list of requirements (all required); those the index cannot test are left out. */
export function textNeeds(reqs: readonly TextRequirement[]): TextNeed[] {
  const out: TextNeed[] = [];
  for (const r of reqs) {
    if ('any' in r) {
      const alts = r.any.map(textNeeds);
      // An alternative the index cannot narrow admits every row group, and so does the whole OR.
      if (alts.length > 0 && alts.every((a) => a.length > 0)) out.push({ any: alts });
      continue;
    }
    const keys = needleKeys(r.needle);
    if (keys.length > 0 && (TEXT_COLUMNS as readonly string[]).includes(r.column)) out.push({ column: r.column as TextColumn, keys });
  }
  return out;
}

function meets(sets: readonly KeySet[], needs: readonly TextNeed[]): boolean {
  return needs.every((n) =>
    'any' in n ? n.any.some((alt) => meets(sets, alt)) : n.keys.every((k) => has(sets[TEXT_COLUMNS.indexOf(n.column)]!, k)),
  );
}

/** Row groups that may hold a row meeting every need. */
export function candidateGroups(index: TextIndex, needs: readonly TextNeed[]): number[] {
  const out: number[] = [];
  for (let g = 0; g < index.sets.length; g++) if (meets(index.sets[g]!, needs)) out.push(g);
  return out;
}

// ---------------------------------------------------------------- building and the file

/** Bytes of postings a token index build holds in memory before spilling them to a run file. */
export const RUN_BYTES = 48 << 20;

/**
 * Reads a segment's text one row group at a time and writes its index files: the trigram sets (`tix`)
 * and the token index (`tok`, token-index.ts), from the same bytes. Both are written as they are
 * built; the token postings held in memory stay under `runBytes` (spilled to a run file beside `tok`,
 * posting-runs.ts). The files are not synced here. On failure neither file is left.
 */
export async function buildTextIndexFiles(
  conn: Connection,
  abs: string,
  to: { readonly tix: string; readonly tok: string },
  runBytes = RUN_BYTES,
): Promise<{ runs: number }> {
  const meta = await conn.all(
    sql`SELECT row_group_num_rows AS n FROM parquet_metadata(${abs}) WHERE path_in_schema = 'seq' ORDER BY row_group_id`,
  );
  const rows = meta.map((m) => Number(m['n']));
  const bits = new Uint32Array(WORDS);
  const tokens = TEXT_COLUMNS.map(() => new TokenBuilder());
  const sinks: FileSink[] = [];
  let run: RunFile | null = null;
  const runs: RunSections[] = [];
  try {
    const tix = new FileSink(to.tix);
    sinks.push(tix);
    tix.u32(MAGIC);
    tix.u32(rows.length);
    for (const n of rows) tix.u32(n);
    let first = 0;
    for (const n of rows) {
      // A row group's text comes as UTF-8 buffers of 256 values each, joined by U+0080 (two bytes >= 128,
      // so no trigram spans two values): a JS string per value cost twice as much, one buffer per row
      // group could pass DuckDB's 4 GB string limit. The file_row_number range lets DuckDB read only
      // this row group. Each buffer comes with its values' byte lengths (NULL for a NULL value, which
      // string_agg leaves out) and its first row, so the token index knows each value's row. One
      // column at a time: a row group's text of all three columns held at once weighed more than the
      // postings the build keeps (DuckDB reads only the column asked for either way).
      const start = param(first);
      for (let c = 0; c < TEXT_COLUMNS.length; c++) {
        const col = ident(TEXT_COLUMNS[c]!);
        const [keys, texts, lens] = (await conn.columns(
          sql`SELECT (file_row_number - ${start}) // 256 AS k, encode(string_agg(${col}, chr(128) ORDER BY file_row_number)),
                list(strlen(${col})::INTEGER ORDER BY file_row_number)
           FROM read_parquet(${abs}, hive_partitioning = false)
           WHERE file_row_number BETWEEN ${start} AND ${first + n - 1} GROUP BY k ORDER BY k`,
        )) as [unknown[], unknown[], unknown[]];
        for (let g = 0; g < texts.length; g++) {
          const v = texts[g];
          if (!(v instanceof Uint8Array)) continue;
          addText(v, bits);
          let row = first + Number(keys[g]) * 256;
          let at = 0;
          for (const len of lens[g] as (number | null)[]) {
            if (len !== null) {
              tokens[c]!.add(v, at, at + len, row);
              at += len + 2;
            }
            row++;
          }
        }
        tix.write(encodeSet(bits));
      }
      if (tokens.reduce((sum, t) => sum + t.heldBytes, 0) > runBytes) {
        run ??= new RunFile(`${to.tok}.run-${process.pid}`);
        runs.push(tokens.map((t) => t.spill(run!)));
      }
      first += n;
    }
    tix.finishWithCrc();
    const tok = new FileSink(to.tok);
    sinks.push(tok);
    writeTokenHead(tok, first, tokens.length);
    tokens.forEach((t, c) => {
      // A read buffer per run, small enough that many runs stay within the budget.
      const readers = run
        ? run.readers(
            runs.map((r) => r[c]!),
            Math.max(4096, Math.min(1 << 20, runBytes / 4 / runs.length)),
          )
        : [];
      t.writeSection(tok, readers);
    });
    tok.finishWithCrc();
    return { runs: runs.length };
  } catch (err) {
    for (const s of sinks) s.abandon();
    rmSync(to.tix, { force: true });
    rmSync(to.tok, { force: true });
    throw err;
  } finally {
    run?.close();
  }
}

/** Encodes (and clears) a bitmap: tag 0 + count + delta varints, or tag 1 + the bitmap when smaller. */
export function encodeSet(bits: Uint32Array): Uint8Array {
  const keys: number[] = [];
  for (let w = 0; w < WORDS; w++) {
    let x = bits[w]!;
    if (x === 0) continue;
    while (x !== 0) {
      const b = 31 - Math.clz32(x & -x);
      keys.push(w * 32 + b);
      x &= x - 1;
    }
  }
  const listBytes = new Uint8Array(8 + keys.length * 3);
  let o = 8;
  let prev = 0;
  for (const k of keys) {
    let d = k - prev;
    prev = k;
    while (d >= 0x80) {
      listBytes[o++] = (d & 0x7f) | 0x80;
      d >>>= 7;
    }
    listBytes[o++] = d;
  }
  let out: Uint8Array;
  if (o <= WORDS * 4 + 8) {
    out = listBytes.subarray(0, o);
    const v = new DataView(out.buffer, out.byteOffset);
    v.setUint32(0, 0, true);
    v.setUint32(4, keys.length, true);
  } else {
    out = new Uint8Array(8 + WORDS * 4);
    const v = new DataView(out.buffer);
    v.setUint32(0, 1, true);
    v.setUint32(4, WORDS * 4, true);
    out.set(new Uint8Array(bits.buffer), 8);
  }
  bits.fill(0);
  return out;
}

/** Parses an index file's bytes; null when damaged (wrong magic, length or checksum). */
export function parseTextIndex(buf: Uint8Array): TextIndex | null {
  if (buf.length < 12) return null;
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const body = buf.length - 4;
  if (v.getUint32(0, true) !== MAGIC || crc32(buf.subarray(0, body)) !== v.getUint32(body, true)) return null;
  const groups = v.getUint32(4, true);
  if (8 + groups * 4 > body) return null;
  const rows = Array.from({ length: groups }, (_, i) => v.getUint32(8 + i * 4, true));
  let o = 8 + groups * 4;
  const sets: KeySet[][] = [];
  for (let g = 0; g < groups; g++) {
    const row: KeySet[] = [];
    for (let c = 0; c < TEXT_COLUMNS.length; c++) {
      if (o + 8 > body) return null;
      const tag = v.getUint32(o, true);
      const n = v.getUint32(o + 4, true);
      o += 8;
      if (tag === 1) {
        if (n !== WORDS * 4 || o + n > body) return null;
        row.push({ bits: new Uint32Array(buf.slice(o, o + n).buffer) });
        o += n;
      } else if (tag === 0) {
        const keys = new Uint32Array(n);
        let prev = 0;
        for (let i = 0; i < n; i++) {
          let d = 0;
          let shift = 0;
          for (;;) {
            if (o >= body) return null;
            const b = buf[o++]!;
            d |= (b & 0x7f) << shift;
            if (b < 0x80) break;
            shift += 7;
            if (shift > 21) return null;
          }
          prev += d;
          keys[i] = prev;
        }
        row.push({ keys });
      } else return null;
    }
    sets.push(row);
  }
  return o === body ? { rows, sets } : null;
}

// ---------------------------------------------------------------- the loaded indexes

/**
 * Loaded indexes by absolute segment path, read on a segment's first text query (not on open or
 * write: ~3.5 bytes per row that a store never searching text need not hold). Segment files are
 * never rewritten in place (a merge writes a new number), so an entry stays valid until its segment
 * is removed (removeTextIndex).
 */
const loaded = new Map<string, TextIndex | null>();

/** Token indexes by absolute segment path, loaded (dictionaries only) on a segment's first token count. */
const loadedTokens = new Map<string, TokenIndex | null>();

/** Writes a segment's two index files to the paths given (text-merge.ts makes them from a merge's inputs instead). */
export type TextIndexWriter = (to: { readonly tix: string; readonly tok: string }) => Promise<unknown>;

/**
 * Writes a new segment's index files (from its text unless `write` is given) and fsyncs them (the
 * caller fsyncs the folder before the manifest lists the segment).
 */
export async function writeTextIndex(conn: Connection, abs: string, write?: TextIndexWriter): Promise<void> {
  const to = { tix: textIndexPath(abs), tok: tokenIndexPath(abs) };
  await (write ? write(to) : buildTextIndexFiles(conn, abs, to));
  await fsyncPathAsync(textIndexPath(abs));
  await fsyncPathAsync(tokenIndexPath(abs));
  loaded.delete(abs);
  loadedTokens.delete(abs);
}

/** The token index of a segment of `rows` rows, or null when it has none usable (count by reading). */
export function tokenIndexOf(abs: string, rows: number): TokenIndex | null {
  if (!indexChecked('tokens', abs)) return null;
  let ix = loadedTokens.get(abs);
  if (ix === undefined) loadedTokens.set(abs, (ix = loadTokenIndex(tokenIndexPath(abs))));
  return ix !== null && ix.rows === rows && ix.columns === TEXT_COLUMNS.length ? ix : null;
}

/** Whether a segment's token index file is whole (checksum and all) and of `rows` rows. */
function tokenIndexSound(abs: string, rows: number): boolean {
  return tokenFileRows(tokenIndexPath(abs)) === rows;
}

/** The index of a segment with these row-group sizes, or null when it has none usable (read everything). */
export function textIndexOf(abs: string, rowGroupRows: readonly number[]): TextIndex | null {
  let ix = loaded.get(abs);
  if (ix === undefined) {
    try {
      ix = parseTextIndex(readFileSync(textIndexPath(abs)));
    } catch {
      ix = null;
    }
    loaded.set(abs, ix);
  }
  if (ix === null || ix.rows.length !== rowGroupRows.length || ix.rows.some((n, i) => n !== rowGroupRows[i])) return null;
  return ix;
}

/**
 * Which of a listed segment's index files are whole and of its rows (the token index's whole checksum
 * is read); a segment listed without row-group sizes (an old manifest) has no use for either.
 */
export function textIndexSound(abs: string, rowGroupRows: readonly number[]): { usable: boolean; tokens: boolean } {
  loaded.delete(abs);
  loadedTokens.delete(abs);
  if (rowGroupRows.length === 0) return { usable: true, tokens: true };
  const usable = textIndexOf(abs, rowGroupRows) !== null;
  // Checked, then let go: loaded again on the segment's first text query.
  loaded.delete(abs);
  const tokens = tokenIndexSound(
    abs,
    rowGroupRows.reduce((a, b) => a + b, 0),
  );
  return { usable, tokens };
}

/**
 * Checks a listed segment's index files after open; rebuilds them when missing, damaged or stale.
 * Returns the bytes it wrote (both files are built; 0 when both were sound).
 */
export async function ensureTextIndex(conn: Connection, abs: string, rowGroupRows: readonly number[]): Promise<number> {
  const { usable, tokens } = textIndexSound(abs, rowGroupRows);
  if (usable && tokens) return 0;
  // Built beside the files, then renamed over them: a crash mid-build leaves the old (damaged) file or
  // the new one, never half (and the unlisted temporary files go on the next open).
  const tmp = { tix: `${textIndexPath(abs)}.tmp-${process.pid}`, tok: `${tokenIndexPath(abs)}.tmp-${process.pid}` };
  await buildTextIndexFiles(conn, abs, tmp);
  const bytes = statSync(tmp.tix).size + statSync(tmp.tok).size;
  try {
    for (const [rebuild, from, path] of [
      [!usable, tmp.tix, textIndexPath(abs)],
      [!tokens, tmp.tok, tokenIndexPath(abs)],
    ] as const) {
      if (!rebuild) continue;
      fsyncFile(from);
      renameSync(from, path);
    }
    fsyncDir(dirname(abs));
  } finally {
    rmSync(tmp.tix, { force: true });
    rmSync(tmp.tok, { force: true });
    // A query meanwhile (a build after open runs beside them) may have found no file: load afresh.
    loaded.delete(abs);
    loadedTokens.delete(abs);
  }
  return bytes;
}

/** Segments below `dir` whose index is held in memory now (for tests and memory figures). */
export function loadedTextIndexes(dir: string): number {
  let n = 0;
  for (const [abs, ix] of loaded) if (ix !== null && abs.startsWith(dir)) n++;
  return n;
}

export function removeTextIndex(abs: string): void {
  loaded.delete(abs);
  loadedTokens.delete(abs);
  rmSync(textIndexPath(abs), { force: true });
  rmSync(tokenIndexPath(abs), { force: true });
}
