// A small file system for full-disk tests: a tmpfs of a few MiB mounted on a fresh folder (needs root
// or CAP_SYS_ADMIN: the full-disk test runs inside a mount namespace of its own, where it has them).
// Where mounting is impossible, `mountSmallDisk` says why.
// `fill` takes all the free space but `leave` bytes, so the next write is cut short mid-way.
import { spawnSync } from 'node:child_process';
import { closeSync, ftruncateSync, fstatSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallDisk {
  dir: string;
  /** Takes the free space but about `leave` bytes (rounded to pages by tmpfs). */
  fill(leave?: number): void;
  /** Gives the space back. */
  free(): void;
  unmount(): void;
}

export function mountSmallDisk(sizeBytes: number): SmallDisk | { skip: string } {
  if (process.platform !== 'linux') return { skip: 'a small tmpfs needs Linux' };
  const dir = mkdtempSync(join(tmpdir(), 'tracelake-disk-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return {
      skip: `cannot mount a small tmpfs here (${(r.stderr || r.error?.message || 'mount failed').trim()}); run as root to simulate a full disk`,
    };
  }
  const fillerPath = join(dir, 'filler');
  let filler = -1;
  return {
    dir,
    fill(leave = 0) {
      if (filler < 0) filler = openSync(fillerPath, 'w');
      const chunk = Buffer.alloc(64 * 1024, 1);
      for (;;) {
        try {
          if (writeSync(filler, chunk) < chunk.length) break;
        } catch {
          break;
        }
      }
      for (;;) {
        try {
          if (writeSync(filler, chunk, 0, 1) < 1) break;
        } catch {
          break;
        }
      }
      if (leave > 0) ftruncateSync(filler, Math.max(0, fstatSync(filler).size - leave));
    },
    free() {
      if (filler >= 0) {
        closeSync(filler);
        filler = -1;
      }
      rmSync(fillerPath, { force: true });
    },
    unmount() {
      if (filler >= 0) closeSync(filler);
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
