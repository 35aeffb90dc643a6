// Persistence of the catalog (users, keys, projects, runs, scorers): small, rarely written, read on
// every request. Kept in memory; every commit is one fsynced line in catalog.log, and the log is
// folded into an atomically replaced catalog.json snapshot once it grows.
//
// A line is `{"crc":"<8 hex>","c":[change, ...]}` followed by `\n`: all changes of one commit, and the
// CRC-32 of the bytes of the `[...]` array as written. A line counts only when it ends in `\n` and its
// CRC matches, so a commit is applied whole or not at all. Folders of earlier versions hold one change
// per line (`{"op":...}`); those lines are still read.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync, writeSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { ReadOnlyError, StorageError } from '../errors.js';
import { crc32 } from '../storage/crc32.js';
import { fsyncDir, writeFileAtomic } from '../storage/fs-util.js';

/** A row of a catalog table: any JSON object with an id (each table's own type is the caller's). */
export type CatalogRow = { readonly id: string };

export type CatalogChange =
  | { readonly op: 'put'; readonly table: string; readonly value: CatalogRow }
  | { readonly op: 'del'; readonly table: string; readonly id: string };

export type Tables = Map<string, Map<string, CatalogRow>>;

/** A put of a row of any table's own type. */
export function putChange<T extends CatalogRow>(table: string, value: T): CatalogChange {
  return { op: 'put', table, value };
}

const SNAPSHOT_AFTER = 5_000;
const HEAD = '{"crc":"';
const MID = '","c":';
const HEAD_LEN = HEAD.length + 8 + MID.length;
const NL = 0x0a;

/**
 * catalog.log holds a damaged line with whole commits after it: cutting it off would lose them, so the
 * folder is not opened and the file is left as it is. `offset` is the byte where the damaged line starts.
 */
export class CatalogLogError extends StorageError {
  readonly file: string;
  readonly offset: number;
  constructor(file: string, offset: number, reason: string) {
    super(
      `${file} is damaged at byte ${offset} (${reason}) and whole changes follow it, so it is not cut there; ` +
        'the file was left unchanged. Restore it from a backup, or remove or repair that line by hand to open the folder.',
    );
    this.file = file;
    this.offset = offset;
  }
}

/** One line of the log as bytes (without its `\n`). */
export function encodeCommit(changes: readonly CatalogChange[]): Buffer {
  const body = Buffer.from(JSON.stringify(changes));
  return Buffer.concat([Buffer.from(`${HEAD}${crc32(body).toString(16).padStart(8, '0')}${MID}`), body, Buffer.from('}')]);
}

/** The changes of one line, or the reason it is not a whole commit. */
function decodeLine(line: Buffer): CatalogChange[] | string {
  if (line.subarray(0, HEAD.length).toString('latin1') === HEAD) {
    if (
      line.length < HEAD_LEN + 1 ||
      line[line.length - 1] !== 0x7d ||
      line.subarray(HEAD_LEN - MID.length, HEAD_LEN).toString('latin1') !== MID
    ) {
      return 'a malformed commit line';
    }
    const crc = line.subarray(HEAD.length, HEAD.length + 8).toString('latin1');
    const body = line.subarray(HEAD_LEN, line.length - 1);
    if (crc32(body).toString(16).padStart(8, '0') !== crc) return 'CRC mismatch';
    try {
      const changes = JSON.parse(body.toString('utf8')) as unknown;
      if (Array.isArray(changes) && changes.every(isChange)) return changes;
    } catch {
      // falls through
    }
    return 'a commit whose changes do not decode';
  }
  // A line of an earlier version: one change, no checksum.
  try {
    const change = JSON.parse(line.toString('utf8')) as unknown;
    if (isChange(change)) return [change];
  } catch {
    // falls through
  }
  // Earlier versions padded a torn tail with a NUL byte and appended after it: such a line is two or
  // more whole changes joined by NULs.
  if (line.includes(0)) {
    const parts: CatalogChange[] = [];
    for (let start = 0; start <= line.length; ) {
      let end = line.indexOf(0, start);
      if (end < 0) end = line.length;
      if (end > start) {
        const part = decodeLine(line.subarray(start, end));
        if (typeof part === 'string') return 'unparsable JSON';
        parts.push(...part);
      }
      start = end + 1;
    }
    return parts;
  }
  return 'unparsable JSON';
}

function isChange(c: unknown): c is CatalogChange {
  if (typeof c !== 'object' || c === null) return false;
  const o = c as Record<string, unknown>;
  if (typeof o['table'] !== 'string') return false;
  if (o['op'] === 'del') return typeof o['id'] === 'string';
  return (
    o['op'] === 'put' &&
    typeof o['value'] === 'object' &&
    o['value'] !== null &&
    typeof (o['value'] as Record<string, unknown>)['id'] === 'string'
  );
}

/**
 * Reads the log's whole commits. A line counts only once its `\n` is on disk; what follows the last
 * `\n` is a torn write (never acknowledged), and so is a damaged last line. A damaged line with whole
 * lines after it is not a torn write: CatalogLogError.
 */
export function readCatalogLog(path: string): {
  commits: CatalogChange[][];
  validBytes: number;
  fileBytes: number;
  damagedTail: string | null;
} {
  const buf = readFileSync(path);
  const commits: CatalogChange[][] = [];
  let validBytes = 0;
  let damaged: { offset: number; reason: string } | null = null;
  for (let start = 0; start < buf.length; ) {
    const nl = buf.indexOf(NL, start);
    if (nl < 0) break; // unterminated: torn, even if it parses
    const line = buf.subarray(start, nl);
    if (line.length === 0) {
      if (damaged === null) validBytes = nl + 1;
      start = nl + 1;
      continue;
    }
    const decoded = decodeLine(line);
    if (typeof decoded === 'string') {
      if (damaged === null) damaged = { offset: start, reason: decoded };
    } else if (damaged !== null) {
      // Whole changes after a damaged line: cutting at the damage would silently drop them.
      throw new CatalogLogError(path, damaged.offset, damaged.reason);
    } else {
      commits.push(decoded);
      validBytes = nl + 1;
    }
    start = nl + 1;
  }
  return { commits, validBytes, fileBytes: buf.length, damagedTail: damaged?.reason ?? null };
}

export class CatalogLog {
  readonly #dir: string;
  #fd: number;
  /** Changes in the log (the snapshot is written after SNAPSHOT_AFTER). */
  #changes = 0;
  /** Bytes of whole commits in the log. */
  #size: number;
  #torn = false;
  // After a failed write or fsync the file is not trusted again (Linux may drop the failed pages and
  // report a later fsync as clean): the next commit first moves every acknowledged change into a fresh
  // snapshot and starts the log empty.
  #distrusted = false;
  /** A read-only log (openReadOnly): never written; `#stamp` says which files were loaded. */
  #readOnly = false;
  #stamp: string | null = null;

  private constructor(dir: string, fd: number, changes: number, size: number) {
    this.#dir = dir;
    this.#fd = fd;
    this.#changes = changes;
    this.#size = size;
  }

  /**
   * Loads snapshot + log into `tables` as a reader beside the writer (a read-only store): whole commits
   * only, nothing cut or created; `reload` reads them again when the files changed, and `write` refuses.
   */
  static openReadOnly(dir: string, tables: Tables): CatalogLog {
    const log = new CatalogLog(dir, -1, 0, 0);
    log.#readOnly = true;
    log.reload(tables);
    return log;
  }

  /**
   * A read-only log: refills `tables` from the files if they changed since the last load; returns
   * whether they did. The writer replaces catalog.json before it empties catalog.log, so a snapshot
   * unchanged across the read of the log means the two belong together.
   */
  reload(tables: Tables): boolean {
    if (!this.#readOnly) return false;
    const snapPath = join(this.#dir, 'catalog.json');
    const logPath = join(this.#dir, 'catalog.log');
    for (let attempt = 0; attempt < 50; attempt++) {
      const before = fileStamp(snapPath);
      const stamp = `${before}/${fileStamp(logPath)}`;
      if (stamp === this.#stamp) return false;
      const fresh: Tables = new Map();
      if (before !== null) loadSnapshot(snapPath, fresh);
      if (existsSync(logPath)) for (const commit of readCatalogLog(logPath).commits) for (const change of commit) apply(fresh, change);
      if (fileStamp(snapPath) !== before) continue;
      tables.clear();
      for (const [name, rows] of fresh) tables.set(name, rows);
      this.#stamp = stamp;
      return true;
    }
    throw new StorageError(`the catalog of ${this.#dir} kept changing while it was read; try again`);
  }

  /** Loads snapshot + log into `tables` and opens the log for appending. */
  static open(dir: string, tables: Tables): CatalogLog {
    const snapPath = join(dir, 'catalog.json');
    if (existsSync(snapPath)) loadSnapshot(snapPath, tables);
    const logPath = join(dir, 'catalog.log');
    let changes = 0;
    let size = 0;
    if (existsSync(logPath)) {
      const log = readCatalogLog(logPath);
      for (const commit of log.commits) {
        for (const change of commit) apply(tables, change);
        changes += commit.length;
      }
      if (log.validBytes < log.fileBytes) {
        // Only ever shortened (validBytes ends at a `\n` inside the file), never extended.
        if (log.damagedTail !== null)
          process.emitWarning(`tracelake: the last line of ${logPath} was damaged (${log.damagedTail}) and is dropped as a torn write`);
        const fd = openSync(logPath, 'r+');
        try {
          ftruncateSync(fd, log.validBytes);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      }
      size = log.validBytes;
    }
    try {
      const created = !existsSync(logPath);
      const log = new CatalogLog(dir, openSync(logPath, 'a', 0o600), changes, size);
      // A new file's name is durable only once its folder is fsynced (before the first commit's fsync counts).
      if (created) fsyncDir(dir);
      return log;
    } catch (err) {
      throw new StorageError(`cannot open ${logPath}`, { cause: err });
    }
  }

  /**
   * Durably records one commit (the caller applies it in memory once this returns). All or nothing: a
   * write that fails or is cut short (a full disk) is cut off the file again and throws, so a torn line
   * never sits before later commits.
   */
  write(tables: Tables, changes: readonly CatalogChange[]): void {
    if (this.#readOnly) throw new ReadOnlyError('changing users, keys, projects, runs or scorers');
    const buf = Buffer.concat([encodeCommit(changes), Buffer.from('\n')]);
    if (this.#torn) this.#cutBack();
    if (this.#distrusted) {
      try {
        this.#snapshot(tables);
      } catch (err) {
        throw new StorageError('writing the catalog failed: a snapshot after an earlier failed write could not be made', { cause: err });
      }
      this.#distrusted = false;
    }
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.#fd, buf, off, buf.length - off);
      fsyncSync(this.#fd);
    } catch (err) {
      this.#torn = true;
      this.#distrusted = true;
      this.#cutBack();
      throw new StorageError('writing the catalog log failed', { cause: err });
    }
    this.#size += buf.length;
    this.#changes += changes.length;
    if (this.#changes >= SNAPSHOT_AFTER) {
      try {
        this.#snapshot(tables);
      } catch (err) {
        // The change is safe in the log; the snapshot is tried again with the next change.
        process.emitWarning(`tracelake: catalog snapshot failed: ${(err as Error).message}`);
      }
    }
  }

  /** Cuts a failed write off the log; if that fails too, the next write tries again first. */
  #cutBack(): void {
    try {
      ftruncateSync(this.#fd, this.#size);
      this.#torn = false;
    } catch (err) {
      throw new StorageError('the catalog log holds a torn write that cannot be cut off', { cause: err });
    }
  }

  #snapshot(tables: Tables): void {
    const snap: Record<string, unknown[]> = {};
    for (const [name, rows] of tables) snap[name] = [...rows.values()];
    writeFileAtomic(join(this.#dir, 'catalog.json'), JSON.stringify(snap), 0o600);
    ftruncateSync(this.#fd, 0);
    fsyncSync(this.#fd);
    this.#changes = 0;
    this.#size = 0;
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }
}

function loadSnapshot(path: string, tables: Tables): void {
  const snap = JSON.parse(readFileSync(path, 'utf8')) as Record<string, ({ id: string } & Record<string, unknown>)[]>;
  for (const [name, rows] of Object.entries(snap)) tables.set(name, new Map(rows.map((r) => [r.id, r])));
}

/** Which file is at `path` now, and how far it was written (null: none). */
function fileStamp(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.ino}:${st.ctimeNs}:${st.mtimeNs}:${st.size}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export function apply(tables: Tables, change: CatalogChange): void {
  let t = tables.get(change.table);
  if (!t) tables.set(change.table, (t = new Map()));
  if (change.op === 'put') t.set(change.value.id, change.value);
  else t.delete(change.id);
}
