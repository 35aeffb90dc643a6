#!/usr/bin/env node
// tracelake serve [--data DIR] [--port N] [--host H]: argv -> TraceStore.open -> buildServer -> listen.
// The only place that listens. SIGINT/SIGTERM seal pending rows and release the folder.
import { parseArgs } from 'node:util';
import { TraceStore } from './engine/trace-store.js';
import { buildServer } from './server/build-server.js';
import { VERSION } from './version.js';

const USAGE = `tracelake ${VERSION}

Usage:
  tracelake serve [--data DIR] [--port N] [--host H] [--body-limit BYTES]
  tracelake --version

Environment: TRACELAKE_DATA (default ./.tracelake), TRACELAKE_PORT (8088), TRACELAKE_HOST (127.0.0.1),
TRACELAKE_API_KEY (an API key to accept; otherwise one is generated on first start).`;

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'body-limit': { type: 'string' },
      quiet: { type: 'boolean' },
    },
    strict: true,
  });
  const dataDir = values.data ?? process.env['TRACELAKE_DATA'] ?? './.tracelake';
  const port = Number(values.port ?? process.env['TRACELAKE_PORT'] ?? 8088);
  const host = values.host ?? process.env['TRACELAKE_HOST'] ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${String(values.port)}`);
  const store = await TraceStore.open(dataDir);
  const { generated, file } = store.bootstrapApiKey(process.env['TRACELAKE_API_KEY'] || undefined);
  const app = buildServer({
    store,
    logger: values.quiet ? false : { level: 'info' },
    ...(values['body-limit'] ? { bodyLimit: Number(values['body-limit']) } : {}),
  });
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
  } else if (!process.env['TRACELAKE_API_KEY']) {
    process.stdout.write(`API key: see ${file} (or set TRACELAKE_API_KEY)\n`);
  }
}

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  switch (command) {
    case 'serve':
      await serve(rest);
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
