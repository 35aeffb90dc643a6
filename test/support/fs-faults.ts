// Fault injection at the OS boundary (test only): wraps the node:fs calls that write, sync, rename or
// create under one folder, counts them while armed, and makes the n-th fail with an errno (ENOSPC,
// EIO) before it reaches the disk. `syncBuiltinESMExports` makes named imports of node:fs see the
// wrappers. DuckDB's own writes (the Parquet COPY) do not go through node:fs and are not counted.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

export type FaultClass = 'write' | 'fsync' | 'rename' | 'create';

export interface FsCall {
  readonly fn: string;
  readonly cls: FaultClass;
  readonly path: string;
}

// The functions wrapped, taken when installed (so another wrapper installed first, such as the
// power-loss recorder, stays underneath).
let real = {
  writeSync: fs.writeSync,
  writeFileSync: fs.writeFileSync,
  appendFileSync: fs.appendFileSync,
  fsyncSync: fs.fsyncSync,
  fdatasyncSync: fs.fdatasyncSync,
  fsync: fs.fsync,
  renameSync: fs.renameSync,
  openSync: fs.openSync,
  mkdirSync: fs.mkdirSync,
};

interface Armed {
  root: string;
  failAt: number | ((call: FsCall) => boolean);
  failed: boolean;
  errno: (call: FsCall) => 'ENOSPC' | 'EIO';
  calls: FsCall[];
}

let armed: Armed | null = null;
/** The call the latest arming failed (null: none yet); kept after disarm, cleared by arm. */
let lastInjected: FsCall | null = null;

function pathOf(target: unknown): string {
  if (typeof target === 'number') {
    try {
      return fs.readlinkSync(`/proc/self/fd/${target}`);
    } catch {
      return '';
    }
  }
  return String(target);
}

function error(code: 'ENOSPC' | 'EIO', call: FsCall): NodeJS.ErrnoException {
  const e = new Error(`${code}: injected failure, ${call.fn} '${call.path}'`) as NodeJS.ErrnoException;
  e.code = code;
  e.errno = code === 'ENOSPC' ? -28 : -5;
  e.syscall = call.fn;
  return e;
}

/** Counts the call; returns the error to raise if it is the one to fail. */
function hit(fn: string, cls: FaultClass, target: unknown): NodeJS.ErrnoException | null {
  const a = armed;
  if (!a) return null;
  const path = pathOf(target);
  if (!path.startsWith(a.root)) return null;
  const call = { fn, cls, path };
  a.calls.push(call);
  const fail = typeof a.failAt === 'number' ? a.calls.length === a.failAt : !a.failed && a.failAt(call);
  if (!fail) return null;
  a.failed = true;
  lastInjected = call;
  return error(a.errno(call), call);
}

const CREATES = new Set(['w', 'wx', 'a', 'ax', 'w+', 'a+']);

let installed = false;
export function installFaults(): void {
  if (installed) return;
  installed = true;
  real = {
    ...real,
    writeSync: fs.writeSync,
    writeFileSync: fs.writeFileSync,
    appendFileSync: fs.appendFileSync,
    fsyncSync: fs.fsyncSync,
    fdatasyncSync: fs.fdatasyncSync,
    fsync: fs.fsync,
    renameSync: fs.renameSync,
    openSync: fs.openSync,
    mkdirSync: fs.mkdirSync,
  };
  const f = fs as unknown as Record<string, unknown>;
  const sync =
    (name: keyof typeof real, cls: FaultClass) =>
    (target: unknown, ...rest: unknown[]) => {
      const e = hit(name, cls, target);
      if (e) throw e;
      return (real[name] as (...a: unknown[]) => unknown)(target, ...rest);
    };
  f['writeSync'] = sync('writeSync', 'write');
  f['writeFileSync'] = sync('writeFileSync', 'write');
  f['appendFileSync'] = sync('appendFileSync', 'write');
  f['fsyncSync'] = sync('fsyncSync', 'fsync');
  f['fdatasyncSync'] = sync('fdatasyncSync', 'fsync');
  f['renameSync'] = sync('renameSync', 'rename');
  f['mkdirSync'] = (path: fs.PathLike, opts?: fs.MakeDirectoryOptions) => {
    const e = !fs.existsSync(path) ? hit('mkdirSync', 'create', path) : null;
    if (e) throw e;
    return real.mkdirSync(path, opts);
  };
  f['openSync'] = (path: fs.PathLike, flags?: fs.OpenMode, mode?: fs.Mode) => {
    const e = typeof flags === 'string' && CREATES.has(flags) ? hit('openSync', 'create', path) : null;
    if (e) throw e;
    return real.openSync(path, flags as fs.OpenMode, mode);
  };
  f['fsync'] = (fd: number, cb: fs.NoParamCallback) => {
    const e = hit('fsync', 'fsync', fd);
    if (e) setImmediate(() => cb(e));
    else real.fsync(fd, cb);
  };
  syncBuiltinESMExports();
}

/**
 * Counts the writing calls under `root` from now on, failing the `failAt`-th (0: none), or the first
 * for which `failAt` is true, with the errno `errno` picks. Returns the calls counted when disarmed.
 */
export function arm(root: string, failAt: number | ((call: FsCall) => boolean), errno: (call: FsCall) => 'ENOSPC' | 'EIO'): void {
  armed = { root, failAt, failed: false, errno, calls: [] };
  lastInjected = null;
}

/** The call that got the injected error since the last arm, or null when none reached it. */
export function injected(): FsCall | null {
  return lastInjected;
}

export function disarm(): FsCall[] {
  const calls = armed?.calls ?? [];
  armed = null;
  return calls;
}
