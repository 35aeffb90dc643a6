// Guarantees: the package's surface (src/index.ts) is the store, its errors, the export and retention
// constants and buildServer, nothing of the engine's or the server's insides. A TraceStore shows its
// seven parts and its folder, and as methods only close, refresh (and readOnly) and the library quick start's aliases, which
// answer exactly as the parts do; authentication, run resolution and crash-safe drops are not on it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as surface from '../src/index.js';
import { internalsOf } from '../src/engine/internals.js';
import { everyKindTrace, tempDir } from './support/helpers.js';

test('src/index.ts exports the library and nothing of its insides', () => {
  assert.deepEqual(Object.keys(surface).sort(), [
    'BadRequestError',
    'CatalogLogError',
    'ConflictError',
    'DEFAULT_KEEP_SNAPSHOTS',
    'DEFAULT_MAX_SNAPSHOT_AGE_SECONDS',
    'EXPORT_COLUMNS',
    'EXPORT_FORMATS',
    'ForbiddenError',
    'IDEMPOTENCY_WINDOW_MS',
    'InvalidRequestError',
    'MAX_RETENTION_DAYS',
    'NotFoundError',
    'OverloadedError',
    'PROJECT_ACTIONS',
    'PROJECT_ROLES',
    'PayloadTooLargeError',
    'ReadOnlyError',
    'SCORER_ACTIONS',
    'SqlError',
    'StorageError',
    'TraceLakeError',
    'TraceStore',
    'UnauthorizedError',
    'VERSION',
    'buildServer',
    'invalid',
    'invalidFields',
  ]);
});

test('a store shows its parts and the quick start aliases, and the aliases are the parts', async (t) => {
  const store = await surface.TraceStore.open(tempDir(t));
  t.after(() => store.close());
  assert.deepEqual(Object.keys(store).sort(), ['catalog', 'data', 'dir', 'iceberg', 'maintenance', 'otlp', 'records', 'scorers', 'users']);
  const methods = Object.getOwnPropertyNames(surface.TraceStore.prototype)
    .filter((m) => m !== 'constructor')
    .sort();
  assert.deepEqual(methods, [
    'aggregate',
    'close',
    'count',
    'createLogStream',
    'createProject',
    'findProjects',
    'flush',
    'listRuns',
    'logTraces',
    'partialSearch',
    'readOnly',
    'refresh',
    'search',
  ]);
  for (const inside of [
    'bootstrapApiKey',
    'loginWithApiKey',
    'loginWithPassword',
    'authenticateApiKey',
    'authenticateToken',
    'finishingDrop',
    'resolveRun',
    'resolveScope',
    'dropRecords',
  ]) {
    assert.equal(inside in store, false, `store.${inside}`);
    for (const part of Object.keys(store))
      assert.equal(inside in Object(store[part as keyof typeof store]), false, `store.${part}.${inside}`);
  }
  // The catalog part is not the raw catalog: no table access.
  for (const raw of ['table', 'get', 'put', 'commit']) assert.equal(raw in store.catalog, false, `store.catalog.${raw}`);

  const project = store.createProject({ name: 'p' });
  assert.deepEqual(store.findProjects({ name: 'p' }), store.catalog.findProjects({ name: 'p' }));
  const stream = store.createLogStream(project.id, 's');
  assert.deepEqual(store.listRuns(project.id), store.catalog.listRuns(project.id));
  assert.deepEqual(
    store.listRuns(project.id, 'log_stream').map((r) => r.id),
    [stream.id],
  );
  const logged = await store.logTraces(project.id, { log_stream_id: stream.id, traces: [everyKindTrace('a') as never] });
  await store.flush();
  const body = { log_stream_id: stream.id, sort: { column_id: 'created_at', ascending: true } };
  assert.deepEqual(await store.search('trace', project.id, body), await store.records.search('trace', project.id, body));
  assert.deepEqual(
    await store.partialSearch('span', project.id, { ...body, select_columns: { column_ids: ['name'] } }),
    await store.records.partialSearch('span', project.id, { ...body, select_columns: { column_ids: ['name'] } }),
  );
  assert.deepEqual(
    await store.count('span', project.id, { log_stream_id: stream.id }),
    await store.records.count('span', project.id, { log_stream_id: stream.id }),
  );
  assert.equal((await store.count('trace', project.id, { log_stream_id: stream.id })).total_count, logged.traces_count);
  const agg = { log_stream_id: stream.id, group_by: [{ column_id: 'type' }], measures: [{ op: 'count' as const }] };
  assert.deepEqual(await store.aggregate('span', project.id, agg), await store.records.aggregate('span', project.id, agg));
});

test('the raw catalog and record store are reached only through internalsOf, for stores TraceStore.open made', async (t) => {
  const store = await surface.TraceStore.open(tempDir(t));
  t.after(() => store.close());
  const { catalog, records } = internalsOf(store);
  assert.equal(catalog.project(store.createProject({ name: 'q' }).id).name, 'q');
  assert.equal(typeof records.countScope, 'function');
  assert.throws(() => internalsOf({}), /not a TraceStore/);
});
