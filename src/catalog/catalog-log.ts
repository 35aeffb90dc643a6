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

  private constructor(dir: string, fd: number, lines: number) {
    this.#dir = dir;
    this.#fd = fd;
    this.#lines = lines;
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
    }
    try {
      return new CatalogLog(dir, openSync(logPath, 'a', 0o600), lines);
    } catch (err) {
      throw new StorageError(`cannot open ${logPath}`, { cause: err });
    }
  }

  /** Durably records changes (already applied in memory by the caller). */
  write(tables: Tables, changes: readonly CatalogChange[]): void {
    const text = changes.map((c) => JSON.stringify(c)).join('\n') + '\n';
    writeSync(this.#fd, text);
    fsyncSync(this.#fd);
    this.#lines += changes.length;
    if (this.#lines >= SNAPSHOT_AFTER) this.#snapshot(tables);
  }

  #snapshot(tables: Tables): void {
    const snap: Record<string, unknown[]> = {};
    for (const [name, rows] of tables) snap[name] = [...rows.values()];
    writeFileAtomic(join(this.#dir, 'catalog.json'), JSON.stringify(snap), 0o600);
    ftruncateSync(this.#fd, 0);
    fsyncSync(this.#fd);
    this.#lines = 0;
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
