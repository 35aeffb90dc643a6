// `tracelake iceberg publish`: publishes a folder no server holds as Iceberg tables (store.iceberg).
import { parseArgs } from 'node:util';
import { TraceStore } from '../engine/trace-store.js';
import type { PublishOptions } from '../iceberg/publish.js';
import { dataDir, positiveInt } from './options.js';

/** The S3 options shared by `iceberg publish` and `serve` (--s3-endpoint, --s3-region). */
export function s3Options(endpoint: string | undefined, region: string | undefined): PublishOptions['s3'] {
  return endpoint === undefined && region === undefined ? undefined : { ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}) };
}

export async function icebergCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      to: { type: 'string' },
      's3-endpoint': { type: 'string' },
      's3-region': { type: 'string' },
      'keep-snapshots': { type: 'string' },
      'max-snapshot-age': { type: 'string' },
    },
  });
  if (positionals[0] !== 'publish' || positionals.length > 1)
    throw new Error('usage: tracelake iceberg publish [--data DIR] [--to DIR|s3://bucket/prefix] [--s3-endpoint URL] [--s3-region R]');
  const s3 = s3Options(values['s3-endpoint'], values['s3-region']);
  const store = await TraceStore.open(dataDir(values.data));
  try {
    const r = await store.iceberg.publish({
      ...(values.to ? { to: values.to } : {}),
      ...(s3 ? { s3 } : {}),
      ...(values['keep-snapshots'] ? { keepSnapshots: positiveInt('--keep-snapshots', values['keep-snapshots'], 0) } : {}),
      ...(values['max-snapshot-age'] ? { maxSnapshotAgeSeconds: positiveInt('--max-snapshot-age', values['max-snapshot-age'], 0) } : {}),
    });
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  } finally {
    await store.close();
  }
}
