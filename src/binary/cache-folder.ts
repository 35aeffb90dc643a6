// The single binary's cache folder: its runtime files and the DuckDB addon and library are unpacked
// once into <base>/tracelake-<version>-<content hash>, then reused by every start. A start writes a
// private temporary folder and renames it into place, so parallel first starts never see a half
// written folder: one rename wins and the others use the winner's copy.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { folderName, type Manifest } from './manifest.js';
import { noexecMountOf } from './mounts.js';

export class CacheFolderError extends Error {
  override name = 'CacheFolderError';
}

const MARKER = '.complete';
const STALE_MS = 60 * 60 * 1000;

/** TRACELAKE_CACHE_DIR, else $XDG_CACHE_HOME/tracelake, else ~/.cache/tracelake (not /tmp: often noexec). */
export function cacheBase(env: NodeJS.ProcessEnv = process.env): string {
  if (env['TRACELAKE_CACHE_DIR']) return resolve(env['TRACELAKE_CACHE_DIR']);
  const xdg = env['XDG_CACHE_HOME'];
  if (xdg && isAbsolute(xdg)) return join(xdg, 'tracelake');
  let home = '';
  try {
    home = homedir();
  } catch {
    // no home directory for this user
  }
  return home ? join(home, '.cache', 'tracelake') : join(tmpdir(), `tracelake-cache-${process.getuid?.() ?? 0}`);
}

export function noexecMessage(dir: string, mountPoint: string): string {
  return (
    `cannot use ${dir} for tracelake's libraries: it is on a filesystem mounted noexec (${mountPoint}), ` +
    'so shared libraries cannot be loaded from it. Set TRACELAKE_CACHE_DIR to a folder on a filesystem that allows execution.'
  );
}

/** A folder someone else owns could hold a library they planted: never load from it. */
function checkOwner(dir: string): void {
  const uid = process.getuid?.();
  let owner: number;
  try {
    owner = statSync(dir).uid;
  } catch {
    return; // not there yet
  }
  if (uid !== undefined && owner !== uid) {
    throw new CacheFolderError(`${dir} belongs to another user (uid ${owner}); set TRACELAKE_CACHE_DIR to a folder of your own`);
  }
}

function isComplete(dir: string, m: Manifest): boolean {
  try {
    if (readFileSync(join(dir, MARKER), 'utf8') !== m.hash) return false;
    return m.files.every((f) => statSync(join(dir, f.path)).size === f.size);
  } catch {
    return false;
  }
}

/** Returns the unpacked folder for `m`, unpacking it first when no complete copy exists. */
export function unpackRuntime(m: Manifest, read: (key: string) => ArrayBuffer | Uint8Array, base = cacheBase()): string {
  const name = folderName(m);
  const final = join(base, name);
  checkOwner(final);
  if (isComplete(final, m)) return final;
  try {
    mkdirSync(base, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new CacheFolderError(
      `cannot create the cache folder ${base} (${(err as Error).message}); set TRACELAKE_CACHE_DIR to a writable folder`,
    );
  }
  const noexec = noexecMountOf(base);
  if (noexec) throw new CacheFolderError(noexecMessage(base, noexec));
  const tmp = mkdtempSync(join(base, `.${name}.tmp-`));
  try {
    for (const f of m.files) {
      const dest = join(tmp, ...f.path.split('/'));
      mkdirSync(dirname(dest), { recursive: true });
      const raw = read(f.key);
      const data = f.gzip ? gunzipSync(raw) : new Uint8Array(raw);
      if (data.byteLength !== f.size) throw new CacheFolderError(`${f.path} unpacked to ${data.byteLength} bytes, expected ${f.size}`);
      writeFileSync(dest, data, { mode: f.executable ? 0o755 : 0o644 });
    }
    writeFileSync(join(tmp, MARKER), m.hash);
    publish(tmp, final, m);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (err instanceof CacheFolderError) throw err;
    throw new CacheFolderError(`cannot unpack into ${base} (${(err as Error).message}); set TRACELAKE_CACHE_DIR to a writable folder`);
  }
  removeLeftovers(base);
  return final;
}

function publish(tmp: string, final: string, m: Manifest): void {
  try {
    renameSync(tmp, final);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTEMPTY') throw err;
  }
  // Another start published first: use its copy. A damaged copy (a file deleted or truncated) is
  // moved aside and replaced; a process still running from it keeps its open files.
  if (isComplete(final, m)) {
    rmSync(tmp, { recursive: true, force: true });
    return;
  }
  const aside = `${dirname(final)}/.${m.hash.slice(0, 16)}.stale-${process.pid}-${Date.now()}`;
  try {
    renameSync(final, aside);
  } catch {
    // someone else moved it already
  }
  try {
    renameSync(tmp, final);
  } catch (err) {
    if (!isComplete(final, m)) throw err;
    rmSync(tmp, { recursive: true, force: true });
  }
  rmSync(aside, { recursive: true, force: true });
}

/** Temporary folders of starts that were killed while unpacking (an hour old: surely not in use). */
function removeLeftovers(base: string): void {
  try {
    for (const entry of readdirSync(base)) {
      if (!entry.startsWith('.') || !/\.(tmp|stale)-/.test(entry)) continue;
      const p = join(base, entry);
      if (Date.now() - statSync(p).mtimeMs > STALE_MS) rmSync(p, { recursive: true, force: true });
    }
  } catch {
    // best effort
  }
}
