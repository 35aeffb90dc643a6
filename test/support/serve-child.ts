// `tracelake serve` in a child process for tests of the CLI's server: started on a free port with
// the given flags and environment, its URL read from the line it prints, stopped with SIGTERM when
// the test ends (if the test did not stop it).
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { servedUrl } from '../../src/cli/served-line.js';
import { nodeEntry } from './node-entry.js';

export interface ServeChild {
  url: string;
  child: ChildProcess;
  /** Resolves when the process has exited. */
  exited: Promise<void>;
}

/** `entry`: Node's arguments that run the CLI (default this repository's, see node-entry.ts). */
export async function serveChild(
  t: TestContext,
  dir: string,
  args: readonly string[],
  env: Record<string, string>,
  entry: readonly string[] = nodeEntry('src/cli.ts'),
): Promise<ServeChild> {
  const child = spawn(process.execPath, [...entry, 'serve', '--data', dir, '--port', '0', '--quiet', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = servedUrl(out);
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  return { url, child, exited };
}
