// Guarantees: `tracelake iceberg publish` publishes a folder's records as Iceberg tables under
// <data>/iceberg (or --to), prints each table's snapshot, and a second run with nothing new sends
// nothing; S3 without credentials, and a target that is neither a folder nor s3://, are refused.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../../scripts/binary/config.js';
import { TraceStore } from '../../src/engine/trace-store.js';
import { everyKindTrace, tempDir } from '../support/helpers.js';
import { nodeEntry } from '../support/node-entry.js';

const cli = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, [...nodeEntry(join(ROOT, 'src', 'cli.ts')), ...args], { cwd: ROOT, encoding: 'utf8', env });

test('tracelake iceberg publish writes the tables and prints their snapshots', async () => {
  const dir = join(tempDir(), 'data');
  const store = await TraceStore.open(dir);
  const project = store.createProject({ name: 'p' });
  const stream = store.createLogStream(project.id, 'main');
  await store.logTraces(project.id, { log_stream_id: stream.id, traces: [everyKindTrace('c')] as never });
  await store.close();

  const first = cli(['iceberg', 'publish', '--data', dir]);
  assert.equal(first.status, 0, first.stderr);
  const r = JSON.parse(first.stdout);
  assert.equal(r.to, join(dir, 'iceberg'));
  for (const table of ['spans', 'traces', 'sessions']) {
    assert.equal(r.tables[table].committed, true);
    const version = readFileSync(join(dir, 'iceberg', table, 'metadata', 'version-hint.text'), 'utf8');
    const meta = JSON.parse(readFileSync(join(dir, 'iceberg', table, 'metadata', `v${version}.metadata.json`), 'utf8'));
    assert.equal(meta['current-snapshot-id'], r.tables[table].snapshotId);
  }
  const again = JSON.parse(cli(['iceberg', 'publish', '--data', dir]).stdout);
  assert.equal(again.tables.spans.committed, false);

  const other = join(tempDir(), 'lake');
  assert.equal(cli(['iceberg', 'publish', '--data', dir, '--to', other]).status, 0);
  assert.ok(existsSync(join(other, 'spans', 'metadata', 'v1.metadata.json')));

  const env = { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' };
  const s3 = cli(['iceberg', 'publish', '--data', dir, '--to', 's3://bucket/prefix', '--s3-endpoint', 'http://127.0.0.1:9'], env);
  assert.notEqual(s3.status, 0);
  assert.match(s3.stderr, /AWS_ACCESS_KEY_ID/);
  const bad = cli(['iceberg', 'publish', '--data', dir, '--to', 'gs://bucket/x']);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /folder or an s3:\/\/ URI/);
  assert.match(cli(['iceberg']).stderr, /usage: tracelake iceberg publish/);
});
