// Guarantees: the Iceberg REST catalog at /iceberg/v1 answers the read side of the spec (config,
// namespaces, tables, table loads) for what was published, in Iceberg's error model for missing
// namespaces and tables; it needs credentials, is for admins only, and exchanges an admin's API key
// (OAuth2 client credentials) for a bearer token that it then accepts. Every answer is checked
// against the OpenAPI document (the suite's contract check).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { everyKindTrace, startServer } from '../support/helpers.js';

test('the Iceberg REST catalog serves the published tables to admins', async (t) => {
  const { store, url, key, projectId, logStreamId } = await startServer(t);
  const admin = store.users.create({ email: 'iceberg-admin@test', role: 'admin' });
  const adminKey = store.users.createApiKey(admin.id).key;
  const get = async (path: string, headers: Record<string, string> = { 'Galileo-API-Key': adminKey }) => {
    const res = await fetch(`${url}/iceberg/v1${path}`, { headers });
    return { status: res.status, body: (await res.json()) as any };
  };

  assert.deepEqual((await get('/config')).body, { defaults: {}, overrides: {} });
  assert.deepEqual((await get('/namespaces')).body, { namespaces: [['tracelake']] });
  assert.deepEqual((await get('/namespaces/tracelake/tables')).body, { identifiers: [] }, 'nothing published yet');
  const missing = await get('/namespaces/tracelake/tables/spans');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.type, 'NoSuchTableException');
  const noNs = await get('/namespaces/other/tables');
  assert.equal(noNs.status, 404);
  assert.equal(noNs.body.error.type, 'NoSuchNamespaceException');

  await store.logTraces(projectId, { log_stream_id: logStreamId, traces: [everyKindTrace('r')] as never });
  const published = await store.iceberg.publish();
  const tables = await get('/namespaces/tracelake/tables');
  assert.deepEqual(
    tables.body.identifiers.map((i: { name: string }) => i.name),
    ['spans', 'traces', 'sessions'],
  );
  const spans = await get('/namespaces/tracelake/tables/spans');
  assert.equal(spans.status, 200);
  assert.equal(spans.body.metadata['current-snapshot-id'], published.tables.spans.snapshotId);
  assert.equal(spans.body['metadata-location'], published.tables.spans.metadata);
  assert.equal(spans.body.metadata['format-version'], 2);
  assert.ok(
    spans.body.metadata.schemas[0].fields.some((f: { name: string }) => f.name === 'num_input_tokens'),
    'a metric column named for its metric',
  );
  assert.deepEqual((await get('/namespaces/tracelake')).body.namespace, ['tracelake']);

  // Credentials: none -> 401; a user who is not an admin -> 403 (the tables hold every project).
  const anon = await get('/namespaces', {});
  assert.equal(anon.status, 401);
  assert.equal(anon.body.error.type, 'NotAuthorizedException');
  const user = await get('/namespaces', { 'Galileo-API-Key': key });
  assert.equal(user.status, 403);
  assert.equal(user.body.error.type, 'ForbiddenException');

  // OAuth2 client credentials: the secret is an API key.
  const token = async (form: Record<string, string>) => {
    const res = await fetch(`${url}/iceberg/v1/oauth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const ok = await token({ grant_type: 'client_credentials', client_id: 'x', client_secret: adminKey, scope: 'catalog' });
  assert.equal(ok.status, 200);
  assert.equal(ok.body.token_type, 'bearer');
  assert.equal((await get('/namespaces/tracelake/tables', { authorization: `Bearer ${ok.body.access_token}` })).status, 200);
  const wrong = await token({ grant_type: 'client_credentials', client_id: 'x', client_secret: 'not-a-key' });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error, 'invalid_client');
  assert.equal((await token({ grant_type: 'password', client_secret: adminKey })).status, 401);
});
