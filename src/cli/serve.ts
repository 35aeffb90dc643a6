// `tracelake serve`: open the folder, build the server, listen. The only place that listens.
// SIGINT/SIGTERM stop accepting requests, fsync the log and release the folder: rows not yet sealed
// stay in the log, which the next start replays.
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { TraceStore } from '../engine/trace-store.js';
import { bootstrapApiKey } from '../server/auth/bootstrap-key.js';
import { buildServer } from '../server/build-server.js';
import { VERSION } from '../version.js';
import { dataDir, env, positiveInt } from './options.js';
import { servedLine } from './served-line.js';
import { s3Options } from './iceberg.js';
import { SCORING_FLAGS, scoringOptions } from './scoring-options.js';
import { publishEvery, type Publishing } from '../iceberg/every.js';

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'body-limit': { type: 'string' },
      'request-timeout': { type: 'string' },
      'memory-limit': { type: 'string' },
      'model-prices': { type: 'string' },
      'rate-limit': { type: 'string' },
      'rate-limit-window': { type: 'string' },
      quiet: { type: 'boolean' },
      'no-ui': { type: 'boolean' },
      'text-index': { type: 'boolean' },
      'no-merges': { type: 'boolean' },
      'iceberg-to': { type: 'string' },
      'iceberg-every': { type: 'string' },
      's3-endpoint': { type: 'string' },
      's3-region': { type: 'string' },
      ...SCORING_FLAGS,
    },
    strict: true,
  });
  const port = Number(values.port ?? env('TRACELAKE_PORT') ?? 8088);
  const host = values.host ?? env('TRACELAKE_HOST') ?? '127.0.0.1';
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${String(values.port)}`);
  const bodyLimit = positiveInt('body limit', values['body-limit'] ?? env('TRACELAKE_BODY_LIMIT'), 32 * 1024 * 1024);
  const requestTimeout = positiveInt('request timeout', values['request-timeout'] ?? env('TRACELAKE_REQUEST_TIMEOUT'), 120_000);
  const memoryLimit = values['memory-limit'] ?? env('TRACELAKE_MEMORY_LIMIT');
  const modelPrices = values['model-prices'] ?? env('TRACELAKE_MODEL_PRICES');
  // Small memory tables seal (and so merge) often: tests of readers beside a live server use it.
  const memTableBytesEnv = env('TRACELAKE_MEM_TABLE_BYTES');
  const memTableBytes = memTableBytesEnv === undefined ? undefined : positiveInt('TRACELAKE_MEM_TABLE_BYTES', memTableBytesEnv, 0);
  const rateMax = values['rate-limit'] ?? env('TRACELAKE_RATE_LIMIT');
  const rateLimit =
    rateMax === undefined
      ? undefined
      : {
          max: positiveInt('rate limit', rateMax, 0),
          windowMs: positiveInt('rate limit window', values['rate-limit-window'] ?? env('TRACELAKE_RATE_LIMIT_WINDOW'), 60_000),
        };
  const textIndex = values['text-index'] === true || env('TRACELAKE_TEXT_INDEX') === '1';
  // A folder to be served as it is (a store built elsewhere, a benchmark's copy): no background merges.
  const noMerges = values['no-merges'] === true || env('TRACELAKE_AUTO_COMPACT') === '0';
  const icebergEvery = values['iceberg-every'] === undefined ? undefined : positiveInt('--iceberg-every', values['iceberg-every'], 0);
  const s3 = s3Options(values['s3-endpoint'], values['s3-region']);
  const scoring = scoringOptions(values);
  const iceberg = { ...(values['iceberg-to'] ? { to: values['iceberg-to'] } : {}), ...(s3 ? { s3 } : {}) };
  // The server owns its process, so it may tune V8: a request's parsed body and records outlive a few
  // scavenges (writes take turns) and reach the old space, which V8 otherwise lets grow by its
  // default factor before collecting. 50% keeps peak memory near what 25% keeps at about the CPU of
  // V8's default (25% spends more CPU a span on marking, the default lets the peak grow).
  // `node --heap-growing-percent=N` overrides.
  if (!process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) v8.setFlagsFromString('--heap-growing-percent=50');
  // Requests are acknowledged once visible: reads then never wait for inserts (pipelineDepth 0).
  const store = await TraceStore.open(dataDir(values.data), {
    pipelineDepth: 0,
    ...(memoryLimit === undefined ? {} : { memoryLimit }),
    ...(modelPrices === undefined ? {} : { modelPrices }),
    ...(memTableBytes === undefined ? {} : { memTableBytes }),
    ...(textIndex ? { textIndex } : {}),
    ...(noMerges ? { autoCompact: false } : {}),
    scoring,
  });
  const key = bootstrapApiKey(store, env('TRACELAKE_API_KEY')); // its hash check runs beside the build
  const app = buildServer({
    store,
    logger: values.quiet ? false : { level: 'info' },
    bodyLimit,
    requestTimeout,
    ...(values['no-ui'] ? { viewer: false as const } : {}),
    ...(rateLimit ? { rateLimit } : {}),
    iceberg,
  });
  let publishing: Publishing | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`tracelake: ${signal}, shutting down\n`);
    try {
      await publishing?.stop();
      await app.close();
      // Sealing could take seconds (a merge under way, minutes): the log already holds every
      // acknowledged row, and the next start replays what is not sealed.
      await store.close({ seal: false });
      process.exit(0);
    } catch (err) {
      process.stderr.write(`tracelake: shutdown failed: ${(err as Error).message}\n`);
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  const { generated, file } = await key;
  const address = await app.listen({ port, host });
  process.stdout.write(servedLine(VERSION, store.dir, address));
  if (!values['no-ui']) process.stdout.write(`Viewer: open ${address}/ui/ in a browser and sign in with the API key\n`);
  if (icebergEvery !== undefined) {
    publishing = publishEvery(store.iceberg, iceberg, icebergEvery * 1000, {
      done: (r) =>
        app.log.info(
          {
            iceberg: {
              to: r.to,
              ms: r.ms,
              bytesSent: r.bytesSent,
              snapshots: Object.fromEntries(Object.entries(r.tables).map(([t, v]) => [t, v.snapshotId])),
            },
          },
          'Iceberg tables published',
        ),
      failed: (err) =>
        app.log.error({ err }, 'Iceberg publish failed (the previous snapshot stays readable; retried at the next interval)'),
    });
    process.stdout.write(
      `Iceberg: publishing every ${icebergEvery} s to ${iceberg.to ?? `${store.dir}/iceberg`}; REST catalog at ${address}/iceberg/v1\n`,
    );
  }
  if (generated) {
    process.stdout.write(`API key (shown once; also saved to ${file}, mode 0600):\n  ${generated}\n`);
  } else if (!env('TRACELAKE_API_KEY')) {
    process.stdout.write(`API key: see ${file} (or set TRACELAKE_API_KEY)\n`);
  }
}
