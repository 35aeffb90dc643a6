// How read-only stores beside the writer announce themselves, so that a merge or a drop does not
// delete a segment under a reader's snapshot. A reader that may write `<data>/readers/` keeps a lease
// there, `<pid>-<random>.json` = {pid, generation, expires_at}: the oldest manifest generation its
// reads may still use, renewed every third of its term. The writer keeps a retired segment (one that
// manifest generation R no longer lists) while an unexpired lease names a generation below R, and
// never longer than its grace period, so a reader that stops renewing (stuck, killed) holds nothing
// and one that never refreshes holds each file for the grace period at most. A reader that cannot
// write the folder has no lease: a read that meets a vanished file moves to a newer snapshot instead.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const READERS_DIR = 'readers';
/** A reader's lease term (default): it renews every third of it. */
export const DEFAULT_LEASE_MS = 30_000;
/** How long the writer keeps a retired segment for readers at most (default). */
export const DEFAULT_READER_GRACE_MS = 10 * 60_000;
/** Leases expired this long are removed by the writer (their reader died without removing them). */
const STALE_MS = 60_000;
/** The writer reads the leases at most this often. */
const LEASES_TTL_MS = 250;
const LEASE_NAME = /^\d+-[0-9a-f]{8}\.json$/;

export interface Lease {
  readonly pid: number;
  /** The oldest manifest generation whose segments the reader may still read. */
  readonly generation: number;
  /** Epoch ms after which the lease counts for nothing. */
  readonly expires_at: number;
}

/** A reader's lease, renewed by a timer (unref'd) until `stop`. */
export class ReaderLease {
  readonly #path: string;
  readonly #generation: () => number;
  readonly #termMs: number;
  readonly #timer: NodeJS.Timeout;

  private constructor(path: string, generation: () => number, termMs: number) {
    this.#path = path;
    this.#generation = generation;
    this.#termMs = termMs;
    this.#timer = setInterval(() => this.renew(), Math.max(10, Math.floor(termMs / 3)));
    this.#timer.unref();
  }

  /** Takes a lease in `<dir>/readers`, or returns null when the folder is missing or not writable. */
  static take(dir: string, generation: () => number, termMs = DEFAULT_LEASE_MS): ReaderLease | null {
    const path = join(dir, READERS_DIR, `${process.pid}-${randomBytes(4).toString('hex')}.json`);
    try {
      writeLease(path, { pid: process.pid, generation: generation(), expires_at: Date.now() + termMs });
    } catch {
      return null;
    }
    return new ReaderLease(path, generation, termMs);
  }

  /** Writes the lease again with a new term and the generation now. A failed write leaves the old one to expire. */
  renew(): void {
    try {
      writeLease(this.#path, { pid: process.pid, generation: this.#generation(), expires_at: Date.now() + this.#termMs });
    } catch {
      // The lease expires; reads then rely on moving to a newer snapshot.
    }
  }

  stop(): void {
    clearInterval(this.#timer);
    rmSync(this.#path, { force: true });
  }
}

/** Whole or not at all (a rename inside the readers folder), so the writer never reads half a lease. */
function writeLease(path: string, lease: Lease): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeSync(fd, JSON.stringify(lease));
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** The leases in `<dir>/readers` (unreadable or malformed ones are skipped); stale ones are removed. */
export function readLeases(dir: string, now = Date.now()): Lease[] {
  const folder = join(dir, READERS_DIR);
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const out: Lease[] = [];
  for (const name of names) {
    if (name.endsWith('.json.tmp')) {
      // A reader killed while renewing leaves its temporary file.
      try {
        if (statSync(join(folder, name)).mtimeMs + STALE_MS < now) rmSync(join(folder, name), { force: true });
      } catch {
        // gone meanwhile
      }
      continue;
    }
    if (!LEASE_NAME.test(name)) continue;
    try {
      const l = JSON.parse(readFileSync(join(folder, name), 'utf8')) as Lease;
      if (typeof l.generation !== 'number' || typeof l.expires_at !== 'number') continue;
      if (l.expires_at + STALE_MS < now) rmSync(join(folder, name), { force: true });
      else out.push(l);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return out;
}

/**
 * The writer's side: segments retired while a reader's lease may still need them, removed once no
 * unexpired lease names a generation before their retirement, or after the grace period.
 */
export class KeptFiles {
  readonly #dir: string;
  readonly #remove: (file: string) => void;
  readonly #graceMs: number;
  readonly #kept = new Map<string, { retiredAt: number; since: number }>();
  #leases: { at: number; list: Lease[] } = { at: -Infinity, list: [] };
  #timer: NodeJS.Timeout | null = null;

  constructor(dir: string, remove: (file: string) => void, graceMs = DEFAULT_READER_GRACE_MS) {
    this.#dir = dir;
    this.#remove = remove;
    this.#graceMs = graceMs;
  }

  /** Removes a segment retired at manifest generation `retiredAt`, now or once no reader needs it. */
  retire(file: string, retiredAt: number): void {
    const now = Date.now();
    if (this.#graceMs > 0 && this.#needed(retiredAt, now)) {
      this.#kept.set(file, { retiredAt, since: now });
      this.#timer ??= setInterval(() => this.sweep(), 1000);
      this.#timer.unref();
    } else this.#remove(file);
  }

  /** Removes the kept files no lease needs any more (also run by the timer). */
  sweep(now = Date.now()): void {
    for (const [file, k] of this.#kept) {
      if (now - k.since < this.#graceMs && this.#needed(k.retiredAt, now)) continue;
      this.#kept.delete(file);
      this.#remove(file);
    }
    if (this.#kept.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  /** Files kept for readers now. */
  get files(): string[] {
    return [...this.#kept.keys()];
  }

  /** Stops the timer; files still kept stay on disk (the next open removes them as unlisted). */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  #needed(retiredAt: number, now: number): boolean {
    if (now - this.#leases.at > LEASES_TTL_MS) this.#leases = { at: now, list: readLeases(this.#dir, now) };
    return this.#leases.list.some((l) => l.expires_at > now && l.generation < retiredAt);
  }
}
