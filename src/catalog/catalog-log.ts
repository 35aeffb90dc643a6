// Persistence of the catalog (users, keys, projects, runs, scorers): small, rarely written, read on
// every request. Kept in memory; every change is one fsynced JSON line in catalog.log, and the log is
// folded into an atomically replaced catalog.json snapshot once it grows.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { StorageError } from '../errors.js';
import { writeFileAtomic } from '../storage/fs-util.js';

export type CatalogChange =
  | { readonly op: 'put'; readonly table: string; readonly value: { readonly id: string } & Record<string, unknown> }
  | { readonly op: 'del'; readonly table: string; readonly id: string };

export type Tables = Map<string, Map<string, Record<string, unknown> & { id: string }>>;

const SNAPSHOT_AFTER = 5_000;

export class CatalogLog {
  readonly #dir: string;
  #fd: number;
  #lines = 0;
  /** Bytes of whole changes in the log. */
  #size: number;
  #torn = false;

  private constructor(dir: string, fd: number, lines: number, size: number) {
    this.#dir = dir;
    this.#fd = fd;
    this.#lines = lines;
    this.#size = size;
  }

  /** Loads snapshot + log into `tables` and opens the log for appending. */
  static open(dir: string, tables: Tables): CatalogLog {
    const snapPath = join(dir, 'catalog.json');
    if (existsSync(snapPath)) {
      const snap = JSON.parse(readFileSync(snapPath, 'utf8')) as Record<string, ({ id: string } & Record<string, unknown>)[]>;
      for (const [name, rows] of Object.entries(snap)) tables.set(name, new Map(rows.map((r) => [r.id, r])));
    }
    const logPath = join(dir, 'catalog.log');
    let lines = 0;
    let size = 0;
    if (existsSync(logPath)) {
      const text = readFileSync(logPath, 'utf8');
      let good = 0;
      for (const line of text.split('\n')) {
        if (line === '') continue;
        let change: CatalogChange;
        try {
          change = JSON.parse(line) as CatalogChange;
        } catch {
          break; // a torn last line: the change was never acknowledged
        }
        apply(tables, change);
        good += Buffer.byteLength(line) + 1;
        lines++;
      }
      if (good !== Buffer.byteLength(text)) {
        const fd = openSync(logPath, 'r+');
        ftruncateSync(fd, good);
        closeSync(fd);
      }
      size = good;
    }
    try {
      return new CatalogLog(dir, openSync(logPath, 'a', 0o600), lines, size);
    } catch (err) {
      throw new StorageError(`cannot open ${logPath}`, { cause: err });
    }
  }

  /**
   * Durably records changes (the caller applies them in memory once this returns). All or nothing: a
   * write that fails or is cut short (a full disk) is cut off the file again and throws, so a torn line
   * never sits before later changes (which the reader would then drop with it).
   */
  write(tables: Tables, changes: readonly CatalogChange[]): void {
    const buf = Buffer.from(changes.map((c) => JSON.stringify(c)).join('\n') + '\n');
    if (this.#torn) this.#cutBack();
    try {
      let off = 0;
      while (off < buf.length) off += writeSync(this.#fd, buf, off, buf.length - off);
      fsyncSync(this.#fd);
    } catch (err) {
      this.#torn = true;
      this.#cutBack();
      throw new StorageError('writing the catalog log failed', { cause: err });
    }
    this.#size += buf.length;
    this.#lines += changes.length;
    if (this.#lines >= SNAPSHOT_AFTER) {
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
    this.#lines = 0;
    this.#size = 0;
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }
}

export function apply(tables: Tables, change: CatalogChange): void {
  let t = tables.get(change.table);
  if (!t) tables.set(change.table, (t = new Map()));
  if (change.op === 'put') t.set(change.value.id, change.value);
  else t.delete(change.id);
}
