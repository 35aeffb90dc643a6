// Guarantees: after logging, updates, deletes by filter (one leaving a parent childless), seals, a
// merge, tombstones after it and retention expiring a run's old records, the published Iceberg tables
// read by ClickHouse (chdb, another process) give exactly tracelake's answers (counts per run and kind,
// the ids, a metric's sum, the parents with children): from a local folder (icebergLocal), from S3
// (icebergS3 against s3rver), and through the REST catalog of `tracelake serve` (DataLakeCatalog,
// with an API key header and with OAuth2 client credentials).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildServer } from '../../src/server/build-server.js';
import { chdbQueries, testDepsMissing } from '../support/chdb.js';
import { clickhouseAnswers, clickhouseQueries, scenarioStore, tracelakeAnswers } from '../support/iceberg.js';
import { S3RVER_KEY, startS3 } from '../support/s3rver.js';

const skip = testDepsMissing();

test('ClickHouse reads the published tables as tracelake answers: local folder, S3 and the REST catalog', { skip }, async (t) => {
  const s = await scenarioStore(t);
  const expected = await tracelakeAnswers(s);
  assert.ok((expected['spans.ids'] as string[]).length > 200, 'the scenario has spans');
  const raw = await chdbQueries(s.root, ["SELECT count() AS n FROM file('store/records/**/kind=span/*.parquet', Parquet)"]);
  assert.ok(
    Number(raw[0]![0]!['n']) > (expected['spans.ids'] as string[]).length,
    'the raw files hold dead rows: the tables must leave them out',
  );

  // Local folder (default target <data>/iceberg): segments hard-linked under each table.
  const local = await s.store.iceberg.publish();
  assert.equal(local.tables.spans.committed, true);
  assert.ok(local.tables.spans.deleteFiles > 0 && local.tables.traces.deleteFiles > 0, 'dead rows became delete files');
  assert.equal(local.bytesSent, 0, 'hard links: no bytes copied');
  const fromLocal = clickhouseAnswers(
    await chdbQueries(
      s.root,
      clickhouseQueries((table) => `icebergLocal('store/iceberg/${table}')`),
    ),
  );
  assert.deepEqual(fromLocal, expected);

  // S3 (s3rver on 127.0.0.1).
  const s3 = await startS3(t);
  const s3opts = { endpoint: s3.endpoint, accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY };
  const up = await s.store.iceberg.publish({ to: `s3://${s3.bucket}/tl`, s3: s3opts });
  assert.ok(up.bytesSent > 0);
  const again = await s.store.iceberg.publish({ to: `s3://${s3.bucket}/tl`, s3: s3opts });
  assert.equal(again.bytesSent, 0, 'nothing changed: nothing sent');
  assert.equal(again.tables.spans.committed, false);
  assert.equal(again.tables.spans.snapshotId, up.tables.spans.snapshotId);
  const fromS3 = clickhouseAnswers(
    await chdbQueries(
      s.root,
      clickhouseQueries((table) => `icebergS3('${s3.endpoint}/${s3.bucket}/tl/${table}/', '${S3RVER_KEY}', '${S3RVER_KEY}')`),
    ),
  );
  assert.deepEqual(fromS3, expected);

  // The REST catalog of the server over the S3 target: an admin's API key, sent as a header or
  // exchanged for a token at /iceberg/v1/oauth/tokens.
  const admin = s.store.users.create({ email: 'lake-admin@test', role: 'admin' });
  const key = s.store.users.createApiKey(admin.id).key;
  const app = buildServer({ store: s.store, viewer: false, iceberg: { to: `s3://${s3.bucket}/tl`, s3: s3opts } });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  for (const auth of [`auth_header = 'Galileo-API-Key: ${key}'`, `catalog_credential = 'tracelake:${key}'`]) {
    const rows = await chdbQueries(s.root, [
      'SET allow_experimental_database_iceberg = 1',
      `CREATE DATABASE lake ENGINE = DataLakeCatalog('${url}/iceberg/v1') SETTINGS catalog_type = 'rest', warehouse = 'tracelake', ` +
        `storage_endpoint = '${s3.endpoint}', aws_access_key_id = '${S3RVER_KEY}', aws_secret_access_key = '${S3RVER_KEY}', ${auth}`,
      'SHOW TABLES FROM lake',
      ...clickhouseQueries((table) => `lake.\`tracelake.${table}\``),
    ]);
    assert.deepEqual(
      rows[2]!.map((r) => r['name']),
      ['tracelake.sessions', 'tracelake.spans', 'tracelake.traces'],
      auth,
    );
    assert.deepEqual(clickhouseAnswers(rows.slice(3)), expected, auth);
  }
});
