// `tracelake serve` in a child process for the HTTP benchmarks: started on a free port, its URL read
// from the line it prints, killed with the benchmark if that stops early, stopped with SIGTERM (the
// clean stop users get from Ctrl-C).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { servedUrl } from '../src/cli/served-line.js';

export interface ServerProcess {
  url: string;
  pid: number;
  /** Resolves when the process has exited (for any reason). */
  exited: Promise<void>;
  /** SIGTERM, then resolves when the process has exited. */
  stop: () => Promise<void>;
}

export interface ServerOptions {
  /** The CLI entry to run (another build's dist/src/cli.js for A/B runs); default this build's. */
  cli?: string;
  /** Node flags for the server process. */
  nodeArgs?: string[];
  /** A label for errors. */
  name?: string;
  /** More `serve` flags. */
  args?: string[];
}

export async function startServer(dir: string, key: string, opts: ServerOptions = {}): Promise<ServerProcess> {
  const cli = opts.cli ?? fileURLToPath(new URL('../src/cli.js', import.meta.url));
  const child = spawn(
    process.execPath,
    [...(opts.nodeArgs ?? []), cli, 'serve', '--data', dir, '--port', '0', '--quiet', ...(opts.args ?? [])],
    {
      env: { ...process.env, TRACELAKE_API_KEY: key },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // A benchmark stopped early (Ctrl-C, kill) must not leave its server running.
  const orphaned = () => child.kill('SIGKILL');
  const interrupted = () => process.exit(130);
  process.once('exit', orphaned);
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = servedUrl(out);
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`${opts.name ?? 'server'} exited with ${code}`)));
  });
  return {
    url,
    pid: child.pid!,
    exited,
    stop: () => {
      process.off('exit', orphaned);
      process.off('SIGINT', interrupted);
      process.off('SIGTERM', interrupted);
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** POST of a JSON body (or a body already serialized) with the API key; a non-2xx answer throws with its text. */
export function poster(server: ServerProcess, key: string): (path: string, body: unknown) => Promise<Record<string, unknown>> {
  const headers = { 'content-type': 'application/json', 'Galileo-API-Key': key };
  return async (path, body) => {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
}
