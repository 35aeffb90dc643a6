// A local S3-compatible server (npm `s3rver`, from test/deps) on 127.0.0.1 for the Iceberg tests:
// one bucket, the server's default credentials, its files in a temporary folder.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { TEST_DEPS } from './chdb.js';
import { tempDir } from './helpers.js';

export const S3RVER_KEY = 'S3RVER';

export interface LocalS3 {
  readonly endpoint: string;
  readonly bucket: string;
  /** Requests the server answered, by method (what a publish sent). */
  readonly requests: { method: string; path: string; bytes: number }[];
}

export async function startS3(t: TestContext, bucket = 'lake'): Promise<LocalS3> {
  const require = createRequire(join(TEST_DEPS, 'package.json'));
  const S3rver = require('s3rver') as new (
    o: object,
  ) => { run(): Promise<{ port: number }>; close(): Promise<void>; on(e: string, f: (...a: unknown[]) => void): void };
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: process.env['TL_S3_LOG'] !== '1',
    directory: tempDir(t, 'tracelake-s3-'),
    configureBuckets: [{ name: bucket }],
  });
  const requests: LocalS3['requests'] = [];
  const { port } = await server.run();
  t.after(() => server.close());
  return { endpoint: `http://127.0.0.1:${port}`, bucket, requests };
}
