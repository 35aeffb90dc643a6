// The export and import operations of TraceStore (selection checks, the import's sink), kept out of trace-store.ts so it stays about logging and queries; TraceStore's methods delegate here.
import { join } from 'node:path';
import type { RecordBatch } from 'apache-arrow';
import { invalid } from '../../errors.js';
import { assertValid } from '../../schemas/check.js';
import type { LogSpansRequest, LogTracesRequest } from '../../schemas/ingest.js';
import { FilterBody } from '../../schemas/query.js';
import type { RecordStore } from '../../storage/record-store.js';
import { EXPORT_FORMATS, type Exporter, type ExportFileOptions, type ExportSelection } from './export.js';
import { importFile, type ImportOptions, type ImportResult, type ImportSink } from './import.js';
import type { Ingest, RunIds } from '../records/ingest.js';
import { resolveTarget } from '../otlp/otlp-target.js';
import type { RecordQueries, RunScope } from '../../query/exec/record-queries.js';
import type { TraceStore } from '../trace-store.js';

function exportScope(store: TraceStore, queries: RecordQueries, projectId: string, body: ExportSelection & RunIds): RunScope {
  const { level, ...filter } = body;
  if (level !== undefined && !['span', 'trace', 'session'].includes(level)) throw invalid(['body', 'level'], "Input should be 'span', 'trace' or 'session'", level, 'literal_error');
  assertValid(FilterBody, filter);
  if (level !== undefined) queries.validateFilter(level, filter);
  return store.resolveScope(projectId, body);
}

export function exportBatches(store: TraceStore, queries: RecordQueries, exporter: Exporter, projectId: string, body: ExportSelection & RunIds): AsyncIterable<RecordBatch> {
  const scope = exportScope(store, queries, projectId, body);
  return exporter.batches(scope, body);
}

export async function exportFile(store: TraceStore, queries: RecordQueries, exporter: Exporter, projectId: string, out: string, options: ExportSelection & RunIds & ExportFileOptions): Promise<{ rows: number }> {
  const { format, onProgress, ...body } = options;
  if (!EXPORT_FORMATS.includes(format)) throw invalid(['format'], `Input should be one of ${EXPORT_FORMATS.join(', ')}`, format, 'literal_error');
  const scope = exportScope(store, queries, projectId, body);
  return exporter.toFile(scope, body, out, { format, ...(onProgress ? { onProgress } : {}) });
}

export async function importInto(store: TraceStore, ingest: Ingest, records: RecordStore, threads: number | undefined, path: string, options: ImportOptions & { project: string; logStream: string }): Promise<ImportResult & { projectId: string; logStreamId: string }> {
  const { project, logStream, ...rest } = options;
  for (const [field, v] of [['project', project], ['logStream', logStream]] as const) {
    if (typeof v !== 'string' || v.trim() === '') throw invalid([field], 'Input should be a non-empty name', v);
  }
  const { project: p, run } = resolveTarget(store, { project, logStream }, null);
  const sink: ImportSink = {
    write: (drafts) => ingest.write(p.id, run.id, drafts, true),
    bulk: (batch) => records.bulkLoad(p.id, run.id, batch),
    logBody: async (body) => {
      const { log_stream_id: _l, experiment_id: _e, metrics_testing_id: _m, ...fields } = body;
      const target = { ...fields, log_stream_id: run.id };
      if (Array.isArray(body['traces'])) await store.logTraces(p.id, target as unknown as LogTracesRequest);
      else await store.logSpans(p.id, target as unknown as LogSpansRequest);
    },
  };
  const result = await importFile(path, sink, { tempDirectory: join(store.dir, 'tmp'), ...(threads ? { threads } : {}) }, rest);
  return { ...result, projectId: p.id, logStreamId: run.id };
}
