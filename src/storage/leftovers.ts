// Files a crashed process leaves behind and nothing reads again: temporary files of atomic writes
// (`<name>.tmp-<pid>`, see fs-util.ts), per-request log reloads of earlier versions (`wal/*.part`) and
// DuckDB spill files (`tmp/`). Removed on open, only after the folder lock is taken: the lock holder
// is the only process that writes them, so none of them belongs to a live store then. Empty partition
// folders under records/ go with the unlisted segment files (segments.ts removeUnlisted).
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Files of the data folder written by writeFileAtomic; other `.tmp-` names (the lock's) are not ours. */
const ATOMIC_TMP = /^(manifest\.json|catalog\.json|api-key|token-secret|id-filter\.bin|dead-rows\.json)\.tmp-\d+$/;

/** Removes the leftovers; returns the paths removed. The caller must hold the folder lock. */
export function removeLeftovers(dir: string): string[] {
  const removed: string[] = [];
  const sweep = (folder: string, match: (name: string) => boolean) => {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      return; // not created yet
    }
    for (const name of names) {
      if (!match(name)) continue;
      const path = join(folder, name);
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    }
  };
  sweep(dir, (name) => ATOMIC_TMP.test(name));
  sweep(join(dir, 'wal'), (name) => name.endsWith('.part'));
  sweep(join(dir, 'tmp'), () => true);
  return removed;
}
