// Log files of tracelake before the Arrow log (`wal-*.ndjson`: one JSON line per row, a `{"commit":n}`
// line per request). A data folder written by that version is opened by converting them: their
// requests are logged again through the Arrow log, then the old files are deleted.
import { closeSync, fstatSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncDir } from '../fs-util.js';
import { join } from 'node:path';

const FILE_RE = /^wal-(\d{9})\.ndjson(\.part)?$/;
const COMMIT_PREFIX = '{"commit":';

/** Requests (their rows, as logged) of the old log files, in order, skipping rows at or below `sealedSeq`. */
export function readLegacyWal(dir: string, sealedSeq: number): { files: string[]; requests: Record<string, unknown>[][] } {
  let names: string[];
  try {
    names = readdirSync(dir).filter((f) => FILE_RE.test(f));
  } catch {
    return { files: [], requests: [] };
  }
  const files = names.sort().map((f) => join(dir, f));
  const requests: Record<string, unknown>[][] = [];
  for (const path of files) {
    if (path.endsWith('.part')) continue; // a per-request reload of the old version: its file still has the rows
    let rows: Record<string, unknown>[] = [];
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      if (line === '') continue;
      if (line.startsWith(COMMIT_PREFIX)) {
        if (rows.length > 0) requests.push(rows);
        rows = [];
        continue;
      }
      try {
        const row = JSON.parse(line) as Record<string, unknown>;
        if (typeof row['seq'] === 'number' && row['seq'] > sealedSeq) rows.push(row);
      } catch {
        break; // a torn tail: the request it belonged to was never acknowledged
      }
    }
  }
  return { files, requests };
}

export function removeLegacyWal(files: readonly string[]): void {
  for (const f of files) rmSync(f, { force: true });
}

/**
 * Most bytes wal/rejected.ndjson may hold (64 MiB). A request that would take it past this is not
 * written; the caller keeps the old log files instead (keepLegacyWal), so nothing is dropped and a
 * folder whose conversion keeps failing and restarting cannot fill the disk with copies.
 */
export const REJECTED_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Appends a refused request to the rejected file, fsynced (with its folder) before the source file may
 * go. Returns false, writing nothing, when the file would grow past `limit`.
 */
export function keepRejected(path: string, rows: readonly Record<string, unknown>[], limit = REJECTED_LIMIT_BYTES): boolean {
  const buf = Buffer.from(`${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const fd = openSync(path, 'a', 0o600);
  try {
    const size = fstatSync(fd).size;
    if (size + buf.length > limit) return false;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(dirname(path));
  return true;
}

/**
 * Keeps old log files whose refused requests did not fit the rejected file: renamed `*.kept` (no
 * longer read as a log, never removed), folder fsynced. Per-request reloads (`.part`) hold nothing
 * their log file does not, so they go.
 */
export function keepLegacyWal(files: readonly string[]): void {
  for (const f of files) {
    if (f.endsWith('.part')) rmSync(f, { force: true });
    else renameSync(f, `${f}.kept`);
  }
  if (files.length > 0) fsyncDir(dirname(files[0]!));
}

/** Where the conversion puts requests the new log refuses: rejected.ndjson while it has room, else the old files stay. */
export class RejectedRequests {
  #full = false;
  constructor(readonly path: string) {}

  keep(rows: readonly Record<string, unknown>[], why: unknown): void {
    if (this.#full) return;
    if (keepRejected(this.path, rows)) {
      process.emitWarning(
        `tracelake: a logged request could not be converted and was kept in wal/rejected.ndjson: ${(why as Error).message}`,
      );
    } else {
      this.#full = true;
      process.emitWarning(
        `tracelake: wal/rejected.ndjson reached its ${REJECTED_LIMIT_BYTES >> 20} MiB limit; ` +
          'the old log files are kept as wal/*.ndjson.kept instead of being deleted',
      );
    }
  }

  /** Deletes the converted files, or keeps them when a refused request did not fit. */
  finish(files: readonly string[]): void {
    if (this.#full) keepLegacyWal(files);
    else removeLegacyWal(files);
  }
}
