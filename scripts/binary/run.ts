// Small process helpers for the binary build: run a tool, fail with its output.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';

export function run(cmd: string, args: string[], options: SpawnSyncOptions = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (r.error) throw new Error(`${cmd} could not start: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status ?? r.signal}\n${String(r.stdout ?? '')}${String(r.stderr ?? '')}`);
  return String(r.stdout ?? '');
}

export function hasTool(cmd: string): boolean {
  return spawnSync(cmd, ['--version'], { stdio: 'ignore' }).status === 0;
}
