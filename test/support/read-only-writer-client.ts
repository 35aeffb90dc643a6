// Starts test/support/read-only-writer.ts in a child process and talks to it (see that file).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { ROOT } from '../../scripts/binary/config.js';
import { nodeEntry } from './node-entry.js';

export interface WriterChild {
  readonly pid: number;
  /** Sends one command; resolves with its answer, rejects when the writer answers an error. */
  send(cmd: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** SIGKILL: the writer dies at whatever point it is (the crash tests). */
  kill(): Promise<void>;
  /** Closes the store (seals) and exits. */
  exit(): Promise<void>;
}

export async function startWriter(t: TestContext, dir: string, readerGraceMs = 60_000): Promise<WriterChild> {
  const child = spawn(process.execPath, [...nodeEntry(join(ROOT, 'test', 'support', 'read-only-writer.ts')), dir, String(readerGraceMs)], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const waiting: ((line: string) => void)[] = [];
  const lines = createInterface({ input: child.stdout! });
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const onExit = () => reject(new Error('the writer child exited'));
      child.once('exit', onExit);
      waiting.push((line) => {
        child.off('exit', onExit);
        resolve(JSON.parse(line) as Record<string, unknown>);
      });
    });
  await next();
  const send = async (cmd: Record<string, unknown>) => {
    const answer = next();
    child.stdin!.write(`${JSON.stringify(cmd)}\n`);
    const a = await answer;
    if (a['ok'] !== true) throw new Error(`writer: ${String(a['error'])}`);
    return a;
  };
  return {
    pid: child.pid!,
    send,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    exit: async () => {
      await send({ op: 'exit' });
      await exited;
    },
  };
}
