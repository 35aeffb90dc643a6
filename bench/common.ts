// Shared bench plumbing: sizes, timing, memory readings, result files, child processes.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

export const SIZES: Record<string, number> = { '10k': 10_000, '100k': 100_000, '1m': 1_000_000, '10m': 10_000_000, '100m': 100_000_000 };

export function parseSize(s: string): number {
  const n = SIZES[s.toLowerCase()];
  if (n !== undefined) return n;
  const v = Number(s);
  if (!Number.isInteger(v) || v <= 0) throw new Error(`unknown size ${s}: use one of ${Object.keys(SIZES).join(', ')} or a number`);
  return v;
}

export interface Measurement {
  name: string;
  value: number;
  unit: string;
  /** Extra figures: spread, ratios, counts. */
  [k: string]: unknown;
}

export function machine(): Record<string, unknown> {
  return {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memory_gib: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: process.platform,
  };
}

/** A memory field of a process's /proc status (VmHWM: peak resident set, VmRSS: resident now) in MiB (Linux). */
export function statusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number | null {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Peak resident set (VmHWM) of a process in MiB, from /proc (Linux). */
export function peakRssMiB(pid = process.pid): number | null {
  return statusMiB(pid, 'VmHWM');
}

/** The Parquet files under a folder (segments of a data folder), paths in full. */
export function parquetFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.parquet'))
    .map((f) => join(dir, f));
}

/** CPU seconds a process has used (user + system, every thread), or null when it is gone. */
export function cpuSeconds(pid = process.pid): number | null {
  try {
    return statCpu(readFileSync(`/proc/${pid}/stat`, 'utf8')).seconds;
  } catch {
    return null;
  }
}

/** Name and CPU seconds (user + system) from a /proc stat line of a process or thread. */
export function statCpu(stat: string): { name: string; seconds: number } {
  const close = stat.lastIndexOf(')');
  const f = stat.slice(close + 2).split(' ');
  return { name: stat.slice(stat.indexOf('(') + 1, close), seconds: (Number(f[11]) + Number(f[12])) / 100 }; // ticks of 1/100 s on Linux
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function writeResults(dir: string, size: string, results: Record<string, unknown>): string {
  mkdirSync(dir, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  const file = join(dir, `${date}-${size}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}

export function fmt(n: number): string {
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(n >= 10 ? 1 : 2);
}

/** Bytes of every file under a folder (what the data really costs on disk). */
export function folderBytes(dir: string): number {
  let total = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else total += statSync(p).size;
    }
  };
  walk(dir);
  return total;
}

/**
 * Runs the module at `moduleUrl` in a new Node process (this one's flags) with `args`, and gives the JSON
 * of the last line it prints on stdout (its stderr passes through): a measurement taken in a process
 * started for it.
 */
export function jsonFromChild<T>(moduleUrl: string, args: readonly string[]): Promise<T> {
  const p = spawn(process.execPath, [...process.execArgv, new URL(moduleUrl).pathname, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) =>
    p.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split('\n').at(-1)!) as T)
        : reject(new Error(`${args[0] ?? 'child'} exited with ${code}`)),
    ),
  );
}
