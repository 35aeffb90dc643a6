// Guarantees: the retention routes read and set retention_days of a project and of a log stream
// (the stream's own value wins), refuse bad values with 422 naming the field, and need the project's
// update right to change it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonCaller, startServer } from '../support/helpers.js';

test('retention of a project and a log stream over HTTP', async (t) => {
  const { store, call, url, projectId, logStreamId } = await startServer(t);
  const stream = `/v2/projects/${projectId}/log_streams/${logStreamId}/retention`;
  assert.deepEqual((await call('GET', `/v2/projects/${projectId}/retention`)).body, {
    retention_days: null,
    effective_retention_days: null,
  });
  const set = await call('PUT', `/v2/projects/${projectId}/retention`, { retention_days: 30 });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  assert.deepEqual((await call('GET', stream)).body, { retention_days: null, effective_retention_days: 30 });
  assert.deepEqual((await call('PUT', stream, { retention_days: 7 })).body, { retention_days: 7, effective_retention_days: 7 });
  assert.deepEqual(store.data.getRetention(projectId, { log_stream_id: logStreamId }), { retention_days: 7, effective_retention_days: 7 });
  for (const bad of [{ retention_days: 0 }, { retention_days: 'x' }, {}, { retention_days: 1.5 }]) {
    const res = await call('PUT', stream, bad);
    assert.equal(res.status, 422, JSON.stringify(bad));
    assert.ok(JSON.stringify(res.body).includes('retention_days'), JSON.stringify(res.body));
  }
  assert.deepEqual((await call('PUT', stream, { retention_days: null })).body, { retention_days: null, effective_retention_days: 30 });
  // A viewer may read it but not change it.
  const viewer = store.users.create({ email: 'viewer@test' });
  store.catalog.addProjectMember(projectId, viewer.id, 'viewer');
  const asViewer = jsonCaller(url, store.users.createApiKey(viewer.id).key);
  assert.equal((await asViewer('GET', `/v2/projects/${projectId}/retention`)).status, 200);
  assert.equal((await asViewer('PUT', `/v2/projects/${projectId}/retention`, { retention_days: 1 })).status, 403);
});
