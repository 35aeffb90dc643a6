// Power-loss model, recording side (test only). Installed in a child process, it wraps the node:fs
// calls that make data durable and journals the durable state as it changes:
// - at each fsync/fdatasync of a file: its bytes at that moment (lower bound of what the fsync keeps);
// - at each fsync of a folder: its entries (name -> file identity, folder or file).
// A file's identity is its inode plus birth time (inodes are reused after unlink). DuckDB writes
// Parquet itself, but the store fsyncs those files through node:fs, so their bytes are captured there.
// The journal (events.ndjson plus content-addressed blobs/) lives outside the data folder;
// power-image.ts rebuilds from it what a power cut after event k leaves on disk.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';

export interface FileEvent {
  i: number;
  kind: 'file';
  key: string;
  blob: string;
}
export interface DirEvent {
  i: number;
  kind: 'dir';
  key: string;
  /** [name, identity, is folder] */
  entries: [string, string, boolean][];
}
export type JournalEvent = FileEvent | DirEvent;

const real = {
  openSync: fs.openSync,
  closeSync: fs.closeSync,
  fsyncSync: fs.fsyncSync,
  fdatasyncSync: fs.fdatasyncSync,
  fsync: fs.fsync,
  fdatasync: fs.fdatasync,
  readFileSync: fs.readFileSync,
  readdirSync: fs.readdirSync,
  statSync: fs.statSync,
  lstatSync: fs.lstatSync,
  appendFileSync: fs.appendFileSync,
  writeFileSync: fs.writeFileSync,
  existsSync: fs.existsSync,
};

let position = 0;

/** Number of durable events so far: a state acknowledged now is in every cut at or after it. */
export function journalPosition(): number {
  return position;
}

function identity(st: fs.BigIntStats): string {
  return `${st.ino}:${st.birthtimeNs}`;
}

/**
 * Starts recording. `root` is the data folder (recorded at its first fsync like any folder); only
 * fsyncs of files and folders below it are journaled.
 */
export function installRecorder(journalDir: string, root: string): void {
  fs.mkdirSync(join(journalDir, 'blobs'), { recursive: true });
  const events = join(journalDir, 'events.ndjson');
  real.writeFileSync(events, '');
  const seen = new Set<string>();
  const record = (fd: number): void => {
    const link = `/proc/self/fd/${fd}`;
    let target: string;
    try {
      target = fs.readlinkSync(link);
    } catch {
      return;
    }
    if (!target.startsWith(root)) return;
    const st = real.statSync(link, { bigint: true });
    const key = identity(st);
    let ev: JournalEvent;
    if (st.isDirectory()) {
      const entries: [string, string, boolean][] = [];
      for (const name of real.readdirSync(link) as string[]) {
        try {
          const e = real.lstatSync(join(link, name), { bigint: true });
          if (e) entries.push([name, identity(e), e.isDirectory()]);
        } catch {
          // removed meanwhile (another thread): not an entry
        }
      }
      ev = { i: ++position, kind: 'dir', key, entries };
    } else {
      const bytes = real.readFileSync(link);
      const blob = createHash('sha1').update(bytes).digest('hex');
      if (!seen.has(blob)) {
        real.writeFileSync(join(journalDir, 'blobs', blob), bytes);
        seen.add(blob);
      }
      ev = { i: ++position, kind: 'file', key, blob };
    }
    real.appendFileSync(events, `${JSON.stringify(ev)}\n`);
  };
  const patched = fs as unknown as Record<string, unknown>;
  patched['fsyncSync'] = (fd: number) => {
    record(fd);
    real.fsyncSync(fd);
  };
  patched['fdatasyncSync'] = (fd: number) => {
    record(fd);
    real.fdatasyncSync(fd);
  };
  patched['fsync'] = (fd: number, cb: fs.NoParamCallback) => {
    record(fd);
    real.fsync(fd, cb);
  };
  patched['fdatasync'] = (fd: number, cb: fs.NoParamCallback) => {
    record(fd);
    real.fdatasync(fd, cb);
  };
  syncBuiltinESMExports();
}
