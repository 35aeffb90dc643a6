// Plumbing for the single-binary tests: build it once per test process (into a temporary folder, with
// the release archive), and run it as under `env -i` (only the variables given, a PATH holding
// nothing, so no `node` can be found) from a folder outside the repository.
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { buildBinary, type BuildResult } from '../../scripts/binary/build.js';
import { jsonCaller, tempDir } from '../support/helpers.js';

/** Why the binary cannot be built here (it targets linux-x64 with glibc), or undefined. */
export function unsupported(): string | undefined {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return `the binary targets linux-x64; this is ${process.platform}-${process.arch}`;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  if (!report?.header?.glibcVersionRuntime) return 'the binary needs glibc (this looks like musl)';
  return undefined;
}

let built: Promise<BuildResult> | undefined;
export function buildOnce(): Promise<BuildResult> {
  built ??= buildBinary({ out: join(tempDir(undefined, 'tracelake-bin-'), 'out'), archive: 'gz' });
  return built;
}

/** A folder to run from, with an empty folder to serve as PATH. */
export function outsideFolder(): { cwd: string; path: string } {
  const cwd = tempDir(undefined, 'tracelake-bin-run-');
  const path = join(cwd, 'empty-path');
  mkdirSync(path);
  return { cwd, path };
}

export function runBinary(
  binary: string,
  args: string[],
  env: Record<string, string>,
  cwd = outsideFolder().cwd,
): SpawnSyncReturns<string> {
  const { path } = outsideFolder();
  return spawnSync(binary, args, { cwd, env: { PATH: path, ...env }, encoding: 'utf8', timeout: 60_000 });
}

export interface BinaryServer {
  url: string;
  stdout: () => string;
  call: ReturnType<typeof jsonCaller>;
  /** SIGTERM, then the exit code (the server fsyncs its log and exits 0). */
  stop(): Promise<number | null>;
}

export async function serveBinary(t: TestContext, binary: string, env: Record<string, string>, cwd: string): Promise<BinaryServer> {
  const { path } = outsideFolder();
  const child = spawn(binary, ['serve', '--quiet'], { cwd, env: { PATH: path, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the binary did not start in 30 s: ${out}${err}`)), 30_000);
    const poll = setInterval(() => {
      const m = / at (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve(m[1]!);
      }
    }, 20);
    child.once('exit', (code) => {
      clearTimeout(timer);
      clearInterval(poll);
      reject(new Error(`the binary exited with ${code}: ${out}${err}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await exited;
    clearTimeout(timer);
    return code;
  };
  t.after(stop);
  return { url, stdout: () => out + err, call: jsonCaller(url, env['TRACELAKE_API_KEY'] ?? ''), stop };
}

/** The entries of a cache base folder, published and temporary. */
export function cacheEntries(base: string): string[] {
  return existsSync(base) ? readdirSync(base).sort() : [];
}

export function presetCount(root: string): number {
  return (JSON.parse(readFileSync(join(root, 'data', 'scorers', 'presets.json'), 'utf8')) as unknown[]).length;
}
