#!/usr/bin/env node
// tracelake serve | users | keys | members: argv -> TraceStore.open -> (buildServer -> listen).
// The only place that listens. SIGINT/SIGTERM seal pending rows and release the folder. The admin
// commands open the folder directly, so they run while no server holds it (or use the HTTP routes).
import { parseArgs } from 'node:util';
import { TraceStore } from './engine/trace-store.js';
import { buildServer } from './server/build-server.js';
import { VERSION } from './version.js';

const USAGE = `tracelake ${VERSION}

Usage:
  tracelake serve [--data DIR] [--port N] [--host H] [--body-limit BYTES] [--request-timeout MS] [--memory-limit SIZE]
                  [--rate-limit N] [--rate-limit-window MS] [--quiet]
  tracelake users create --email E [--password P] [--admin] [--first-name F] [--last-name L] [--data DIR]
  tracelake users list [--data DIR]
  tracelake keys create --email E [--description D] [--data DIR]     (prints the key once)
  tracelake keys list [--email E] [--data DIR]
  tracelake keys revoke KEY_ID [--data DIR]
  tracelake members add --project NAME --email E --role owner|editor|annotator|viewer [--data DIR]
  tracelake --version

Environment: TRACELAKE_DATA (default ./.tracelake), TRACELAKE_PORT (8088), TRACELAKE_HOST (127.0.0.1),
TRACELAKE_API_KEY (an API key to accept; otherwise one is generated on first start),
TRACELAKE_BODY_LIMIT (bytes, default 33554432), TRACELAKE_REQUEST_TIMEOUT (ms, default 120000),
TRACELAKE_MEMORY_LIMIT (DuckDB's memory limit, default 2GB), TRACELAKE_RATE_LIMIT (requests per API key
and window; off by default), TRACELAKE_RATE_LIMIT_WINDOW (ms, default 60000).`;

const env = (name: string): string | undefined => process.env[name] || undefined;

function dataDir(v: string | undefined): string {
  return v ?? env('TRACELAKE_DATA') ?? './.tracelake';
}

function positiveInt(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`invalid ${name}: ${v}`);
  return n;
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'body-limit': { type: 'string' },
      'request-timeout': { type: 'string' },
      'memory-limit': { type: 'string' },
      'rate-limit': { type: 'string' },
      'rate-limit-window': { type: 'string' },
      quiet: { type: 'boolean' },
    },
    strict: true,
  });
  const port = Number(values.port ?? env('TRACELAKE_PORT') ?? 8088);
  const host = values.host ?? env('TRACELAKE_HOST') ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${String(values.port)}`);
  const bodyLimit = positiveInt('body limit', values['body-limit'] ?? env('TRACELAKE_BODY_LIMIT'), 32 * 1024 * 1024);
  const requestTimeout = positiveInt('request timeout', values['request-timeout'] ?? env('TRACELAKE_REQUEST_TIMEOUT'), 120_000);
  const memoryLimit = values['memory-limit'] ?? env('TRACELAKE_MEMORY_LIMIT');
  const rateMax = values['rate-limit'] ?? env('TRACELAKE_RATE_LIMIT');
  const rateLimit = rateMax === undefined ? undefined : { max: positiveInt('rate limit', rateMax, 0), windowMs: positiveInt('rate limit window', values['rate-limit-window'] ?? env('TRACELAKE_RATE_LIMIT_WINDOW'), 60_000) };
  const store = await TraceStore.open(dataDir(values.data), memoryLimit === undefined ? {} : { memoryLimit });
  const { generated, file } = store.bootstrapApiKey(env('TRACELAKE_API_KEY'));
  const app = buildServer({ store, logger: values.quiet ? false : { level: 'info' }, bodyLimit, requestTimeout, ...(rateLimit ? { rateLimit } : {}) });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`tracelake: ${signal}, sealing and shutting down\n`);
    try {
      await app.close();
      await store.close();
      process.exit(0);
    } catch (err) {
      process.stderr.write(`tracelake: shutdown failed: ${(err as Error).message}\n`);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const address = await app.listen({ port, host });
  process.stdout.write(`tracelake ${VERSION} serving ${store.dir} at ${address}\n`);
  if (generated) {
    process.stdout.write(`API key (shown once; also saved to ${file}, mode 0600):\n  ${generated}\n`);
  } else if (!env('TRACELAKE_API_KEY')) {
    process.stdout.write(`API key: see ${file} (or set TRACELAKE_API_KEY)\n`);
  }
}

/** Opens the folder, runs an admin command, closes (without sealing: nothing was logged). */
async function withStore<T>(dir: string | undefined, fn: (store: TraceStore) => T | Promise<T>): Promise<T> {
  const store = await TraceStore.open(dataDir(dir));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

const print = (v: unknown) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

async function admin(group: string, argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      admin: { type: 'boolean' },
      'first-name': { type: 'string' },
      'last-name': { type: 'string' },
      description: { type: 'string' },
      project: { type: 'string' },
      role: { type: 'string' },
    },
  });
  const need = (name: 'email' | 'project' | 'role') => {
    const v = values[name];
    if (!v) throw new Error(`--${name} is required`);
    return v;
  };
  await withStore(values.data, (store) => {
    const user = () => {
      const u = store.userByEmail(need('email'));
      if (!u) throw new Error(`no user with email ${values.email}`);
      return u;
    };
    switch (`${group} ${action}`) {
      case 'users create': {
        const u = store.createUser({
          email: need('email'),
          ...(values.password ? { password: values.password } : {}),
          role: values.admin ? 'admin' : 'user',
          ...(values['first-name'] ? { first_name: values['first-name'] } : {}),
          ...(values['last-name'] ? { last_name: values['last-name'] } : {}),
        });
        return print({ id: u.id, email: u.email, role: u.role });
      }
      case 'users list':
        return print(store.listUsers());
      case 'keys create': {
        const { key, id } = store.createApiKey(user().id, values.description ?? '');
        process.stdout.write(`API key ${id} (shown once, store it now):\n  ${key}\n`);
        return undefined;
      }
      case 'keys list':
        return print(store.listApiKeys(values.email ? user().id : undefined));
      case 'keys revoke': {
        const id = positionals[0];
        if (!id) throw new Error('usage: tracelake keys revoke KEY_ID');
        store.revokeApiKey(id);
        return print({ revoked: id });
      }
      case 'members add': {
        const project = store.findProjects({ name: need('project') })[0];
        if (!project) throw new Error(`no project named ${values.project}`);
        return print(store.addProjectMember(project.id, user().id, need('role') as never));
      }
      default:
        throw new Error(`unknown command: ${group} ${action ?? ''}\n\n${USAGE}`);
    }
  });
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'serve':
      await serve(rest);
      break;
    case 'users':
    case 'keys':
    case 'members':
      await admin(command, rest);
      break;
    case '--version':
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      break;
    case undefined:
    case '--help':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      break;
    default:
      process.stderr.write(`unknown command: ${command}\n\n${USAGE}\n`);
      process.exit(2);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`tracelake: ${(err as Error).message}\n`);
  process.exit(1);
});
