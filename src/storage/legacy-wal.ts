// Log files of tracelake before the Arrow log (`wal-*.ndjson`: one JSON line per row, a `{"commit":n}`
// line per request). A data folder written by that version is opened by converting them: their
// requests are logged again through the Arrow log, then the old files are deleted.
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncDir } from './fs-util.js';
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

/** Appends a refused request to the rejected file, fsynced (with its folder) before the source file goes. */
export function keepRejected(path: string, rows: readonly Record<string, unknown>[]): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSync(fd, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(dirname(path));
}
