// Power-loss model, rebuilding side (test only): what the disk holds after a power cut right after
// journal event k (see fs-recorder.ts). A folder holds the entries of its last fsync (none if never
// fsynced), a file the bytes of its last fsync (empty if never), and nothing else exists. The data
// folder itself is taken as existing (the test creates it before the store runs).
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JournalEvent } from './fs-recorder.js';

export class PowerJournal {
  readonly events: JournalEvent[];
  readonly #dir: string;
  readonly #rootKey: string;

  /** `rootKey`: the identity of the data folder (its first folder event names it, see `load`). */
  private constructor(dir: string, events: JournalEvent[], rootKey: string) {
    this.#dir = dir;
    this.events = events;
    this.#rootKey = rootKey;
  }

  static load(journalDir: string, rootKey: string): PowerJournal {
    const text = readFileSync(join(journalDir, 'events.ndjson'), 'utf8');
    const events = text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => JSON.parse(l) as JournalEvent);
    return new PowerJournal(journalDir, events, rootKey);
  }

  /** Writes the image of a cut after event `k` (0: before any fsync) into `out` (emptied first). */
  build(k: number, out: string, skip: (name: string) => boolean = () => false): void {
    const files = new Map<string, string>();
    const dirs = new Map<string, [string, string, boolean][]>();
    for (const e of this.events) {
      if (e.i > k) break;
      if (e.kind === 'file') files.set(e.key, e.blob);
      else dirs.set(e.key, e.entries);
    }
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    const walk = (key: string, path: string, depth: number): void => {
      for (const [name, child, isDir] of dirs.get(key) ?? []) {
        if (depth === 0 && skip(name)) continue;
        const p = join(path, name);
        if (isDir) {
          mkdirSync(p);
          walk(child, p, depth + 1);
        } else {
          const blob = files.get(child);
          if (blob) copyFileSync(join(this.#dir, 'blobs', blob), p);
          else writeFileSync(p, '');
        }
      }
    };
    walk(this.#rootKey, out, 0);
  }
}
