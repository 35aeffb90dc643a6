// A throwaway PostgreSQL cluster for the benchmark: initdb in a temp folder, started on a Unix socket
// in that folder (no TCP port, so nothing else on the machine can collide with it or reach it),
// stopped and removed afterwards. Uses Debian's server binaries (/usr/lib/postgresql/<v>/bin), which
// are not on PATH there. The server refuses to run as root, so when we are root every server
// command runs as the `postgres` system user (runuser), in a folder that user owns.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { PeerUnavailableError } from './peer.js';

export interface PgClusterOptions {
  /** Run `apt-get install -y postgresql` when the server binaries are missing (root only). */
  install?: boolean;
  /** Extra postgresql.conf lines (name -> value). */
  settings?: Record<string, string>;
}

export interface PgCluster {
  readonly binDir: string;
  readonly version: string;
  /** Folder holding the server's Unix socket: the `host` to connect to. */
  readonly socketDir: string;
  readonly port: number;
  readonly user: string;
  readonly dataDir: string;
  /** The postmaster and its children (backends, checkpointer...), for memory readings. */
  pids(): number[];
  stop(): Promise<void>;
}

const PORT = 5432; // only names the socket file: listen_addresses is empty

/** Server binaries: $TRACELAKE_PG_BIN, else Debian's newest /usr/lib/postgresql/<v>/bin (15 preferred), else PATH. */
export function findPgBinDir(): string | null {
  const env = process.env['TRACELAKE_PG_BIN'];
  if (env && existsSync(join(env, 'initdb'))) return env;
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => existsSync(join(base, v, 'bin', 'initdb')) && existsSync(join(base, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    const pick = versions.includes('15') ? '15' : versions[0];
    if (pick) return join(base, pick, 'bin');
  }
  for (const d of (process.env['PATH'] ?? '').split(':')) if (d && existsSync(join(d, 'initdb')) && existsSync(join(d, 'pg_ctl'))) return d;
  return null;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

function run(cmd: string, args: readonly string[], asPostgres: boolean): SpawnSyncReturns<string> {
  const r = asPostgres
    ? spawnSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { encoding: 'utf8' })
    : spawnSync(cmd, args, { encoding: 'utf8' });
  return r;
}

function check(r: SpawnSyncReturns<string>, what: string): string {
  if (r.error) throw new PeerUnavailableError(`${what} could not start: ${r.error.message}`, { cause: r.error });
  if (r.status !== 0)
    throw new PeerUnavailableError(`${what} failed (exit ${r.status}): ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' | ')}`);
  return r.stdout;
}

function ids(name: string): { uid: number; gid: number } | null {
  const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) return null;
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

function installServer(): void {
  // Debian's packages; the only registry this needs. Output goes to our stderr so a long install is visible.
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', 'postgresql']]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0) throw new PeerUnavailableError(`apt-get ${args.join(' ')} failed (exit ${r.status ?? r.error?.message})`);
  }
}

/** Creates and starts a cluster; throws PeerUnavailableError (with the reason) when it cannot. */
export async function startPgCluster(options: PgClusterOptions = {}): Promise<PgCluster> {
  let binDir = findPgBinDir();
  if (binDir === null && options.install) {
    if (!isRoot())
      throw new PeerUnavailableError('PostgreSQL server is not installed and installing it needs root (apt-get install -y postgresql)');
    installServer();
    binDir = findPgBinDir();
  }
  if (binDir === null) {
    throw new PeerUnavailableError(
      'PostgreSQL server is not installed (no initdb in /usr/lib/postgresql/*/bin or on PATH); apt-get install -y postgresql, or pass --install-postgres',
    );
  }
  const version = check(spawnSync(join(binDir, 'postgres'), ['--version'], { encoding: 'utf8' }), 'postgres --version').trim();

  const root = isRoot();
  const owner = root ? ids('postgres') : null;
  if (root && owner === null)
    throw new PeerUnavailableError('running as root, and there is no `postgres` user to run the server as (the server refuses root)');

  // mkdtemp makes a 0700 folder; the server user must be able to enter it.
  const base = mkdtempSync(join(tmpdir(), 'tracelake-pg-'));
  chmodSync(base, 0o711);
  const dataDir = join(base, 'data');
  const socketDir = join(base, 'socket');
  const logFile = join(base, 'server.log');
  for (const d of [dataDir, socketDir]) {
    mkdirSync(d, { mode: 0o700 });
    if (owner) chownSync(d, owner.uid, owner.gid);
  }
  const user = 'postgres';
  const cleanup = () => rmSync(base, { recursive: true, force: true });
  try {
    // C locale: byte-order text comparison (the same order as the other peers) and no locale surprises.
    check(
      run(join(binDir, 'initdb'), ['-D', dataDir, '-U', user, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'], root),
      'initdb',
    );
    const conf: Record<string, string> = {
      listen_addresses: "''",
      unix_socket_directories: `'${socketDir}'`,
      port: String(PORT),
      ...options.settings,
    };
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      `\n# tracelake peer benchmark\n${Object.entries(conf)
        .map(([k, v]) => `${k} = ${v}`)
        .join('\n')}\n`,
    );
    if (owner) {
      // pg_ctl writes its log as the server user.
      appendFileSync(logFile, '');
      chownSync(logFile, owner.uid, owner.gid);
    }
    check(run(join(binDir, 'pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start'], root), 'pg_ctl start');
  } catch (err) {
    let log = '';
    try {
      log = readFileSync(logFile, 'utf8').trim().split('\n').slice(-3).join(' | ');
    } catch {
      // no log yet
    }
    cleanup();
    if (err instanceof PeerUnavailableError && log) err.message += ` (server log: ${log})`;
    throw err;
  }

  let stopped = false;
  const stopNow = (): void => {
    if (stopped) return;
    stopped = true;
    try {
      run(join(binDir, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', '-t', '60', 'stop'], root);
    } finally {
      cleanup();
    }
  };
  // A benchmark that dies half way must not leave a server running.
  process.once('exit', stopNow);
  return {
    binDir,
    version,
    socketDir,
    port: PORT,
    user,
    dataDir,
    pids() {
      try {
        const pm = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        const children = readFileSync(`/proc/${pm}/task/${pm}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
        return [pm, ...children];
      } catch {
        return [];
      }
    },
    async stop() {
      process.removeListener('exit', stopNow);
      stopNow();
    },
  };
}

/** Who the server runs as here (for reports). */
export function pgRunsAs(): string {
  return isRoot() ? 'postgres (via runuser; we are root)' : userInfo().username;
}
