// `tracelake sql | export | import`: data in and out of a folder. Import opens the folder (no server
// may hold it); sql and export read it beside a server that holds it (read-only), or open it when none does.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { EXPORT_FORMATS, type ExportFormat } from '../engine/data/export.js';
import { TraceStore, type TraceStoreOptions } from '../engine/trace-store.js';
import { ConflictError } from '../errors.js';
import type { Level } from '../query/columns.js';
import { dataDir, jsonFlag, positiveInt } from './options.js';
import { progressBar } from './progress.js';

export async function withStore<T>(
  dir: string | undefined,
  fn: (store: TraceStore) => Promise<T>,
  options: TraceStoreOptions = {},
): Promise<T> {
  return using(await TraceStore.open(dataDir(dir), options), fn);
}

/**
 * A store for reading: read-only with `--read-only`; otherwise the folder opened, or, when another
 * process (a server) holds it, read beside that process (said on stderr).
 */
async function withReader<T>(dir: string | undefined, readOnly: boolean | undefined, fn: (store: TraceStore) => Promise<T>): Promise<T> {
  const folder = dataDir(dir);
  if (readOnly) return using(await TraceStore.open(folder, { readOnly: true }), fn);
  let store: TraceStore;
  try {
    store = await TraceStore.open(folder);
  } catch (err) {
    if (!(err instanceof ConflictError && err.code === 'STORE_LOCKED')) throw err;
    process.stderr.write(`${err.message.replace(/; stop it.*$/, '')}: reading it read-only beside that process\n`);
    store = await TraceStore.open(folder, { readOnly: true });
  }
  return using(store, fn);
}

async function using<T>(store: TraceStore, fn: (store: TraceStore) => Promise<T>): Promise<T> {
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** JSON text of a result value: bigints as numbers when exact, else as strings; dates as ISO text. */
export function jsonValue(_key: string, v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  return v;
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s =
    typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v, jsonValue) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** `tracelake sql "SELECT ..." [--param V]... [--format jsonl|json|csv]`: rows to stdout. */
export async function sqlCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      param: { type: 'string', multiple: true },
      format: { type: 'string' },
      'read-only': { type: 'boolean' },
    },
  });
  const query = positionals[0];
  if (!query || positionals.length > 1) throw new Error('usage: tracelake sql "SELECT ..." (one query, quoted)');
  const format = values.format ?? 'jsonl';
  if (!['jsonl', 'json', 'csv'].includes(format)) throw new Error(`invalid --format: ${format} (jsonl, json or csv)`);
  const rows = await withReader(values.data, values['read-only'], (store) => store.data.sql(query, values.param ?? []));
  const out = process.stdout;
  if (format === 'json') out.write(`${JSON.stringify(rows, jsonValue, 2)}\n`);
  else if (format === 'jsonl') for (const r of rows) out.write(`${JSON.stringify(r, jsonValue)}\n`);
  else {
    const cols = rows.length > 0 ? Object.keys(rows[0]!) : [];
    out.write(`${cols.map(csvCell).join(',')}\n`);
    for (const r of rows) out.write(`${cols.map((c) => csvCell(r[c])).join(',')}\n`);
  }
}

/** Project id and run ids of `--project NAME [--log-stream NAME]` (names as the UI shows them). */
export function selectRun(
  store: TraceStore,
  project: string | undefined,
  stream: string | undefined,
): { projectId: string; ids: { log_stream_id?: string } } {
  if (!project) throw new Error('--project is required');
  const p = store.catalog.findProjects({ name: project })[0];
  if (!p) throw new Error(`no project named ${project}`);
  if (stream === undefined) return { projectId: p.id, ids: {} };
  const run = store.catalog.listRuns(p.id, 'log_stream').find((r) => r.name === stream);
  if (!run) throw new Error(`no log stream named ${stream} in project ${project}`);
  return { projectId: p.id, ids: { log_stream_id: run.id } };
}

/** `tracelake export --project NAME [--log-stream NAME] [--level L] [--filter-tree JSON] --format F --out PATH`. */
export async function exportCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: 'string' },
      project: { type: 'string' },
      'log-stream': { type: 'string' },
      level: { type: 'string' },
      'filter-tree': { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
      'read-only': { type: 'boolean' },
    },
  });
  const format = (values.format ?? 'parquet') as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) throw new Error(`invalid --format: ${format} (${EXPORT_FORMATS.join(', ')})`);
  if (!values.out) throw new Error('--out is required');
  const out = resolve(values.out);
  const filterTree = jsonFlag('--filter-tree', values['filter-tree'], 'a filter tree');
  if (filterTree !== undefined && values.level === undefined)
    throw new Error('--filter-tree needs --level (the level the filter applies to)');
  await withReader(values.data, values['read-only'], async (store) => {
    const { projectId, ids } = selectRun(store, values.project, values['log-stream']);
    const bar = progressBar(`export ${format}`);
    try {
      const { rows } = await store.data.exportFile(projectId, out, {
        ...ids,
        format,
        ...(values.level !== undefined ? { level: values.level as Level } : {}),
        ...(filterTree !== undefined ? { filter_tree: filterTree as never } : {}),
        onProgress: bar.update,
      });
      bar.stop();
      process.stderr.write(`exported ${rows} records to ${out}\n`);
    } catch (err) {
      bar.stop();
      throw err;
    }
  });
}

/** `tracelake import PATH --project NAME --log-stream NAME [--format F] [--batch-rows N]`. */
export async function importCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      data: { type: 'string' },
      project: { type: 'string' },
      'log-stream': { type: 'string' },
      format: { type: 'string' },
      'batch-rows': { type: 'string' },
    },
  });
  const path = positionals[0];
  if (!path || positionals.length > 1) throw new Error('usage: tracelake import PATH --project NAME --log-stream NAME');
  if (!values.project) throw new Error('--project is required');
  if (!values['log-stream']) throw new Error('--log-stream is required');
  // Left to the library when not given: its default depends on the path (segments or the log).
  const batchRows = values['batch-rows'] === undefined ? undefined : positiveInt('--batch-rows', values['batch-rows'], 1);
  await withStore(values.data, async (store) => {
    const bar = progressBar('import');
    try {
      const res = await store.data.importFile(resolve(path), {
        project: values.project!,
        logStream: values['log-stream']!,
        ...(batchRows !== undefined ? { batchRows } : {}),
        ...(values.format !== undefined ? { format: values.format as never } : {}),
        onProgress: (done, total) => {
          if (total) bar.update(done / total);
        },
      });
      bar.stop();
      process.stderr.write(
        res.bodies > 0
          ? `logged ${res.bodies} bodies into ${values.project}/${values['log-stream']}\n`
          : `imported ${res.records} records into ${values.project}/${values['log-stream']}\n`,
      );
    } catch (err) {
      bar.stop();
      throw err;
    }
  });
}

/** `tracelake retention get|set --project NAME [--log-stream NAME] [--days N|none]`. */
export async function retentionCommand(argv: string[]): Promise<void> {
  const [action, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { data: { type: 'string' }, project: { type: 'string' }, 'log-stream': { type: 'string' }, days: { type: 'string' } },
  });
  if (action !== 'get' && action !== 'set')
    throw new Error('usage: tracelake retention get|set --project NAME [--log-stream NAME] [--days N|none]');
  let days: number | null = null;
  if (action === 'set') {
    if (values.days === undefined) throw new Error('--days is required (a number of days, or none)');
    days = values.days === 'none' ? null : Number(values.days);
  }
  await withStore(values.data, async (store) => {
    const { projectId, ids } = selectRun(store, values.project, values['log-stream']);
    const setting =
      action === 'set' ? store.data.setRetention(projectId, { ...ids, retention_days: days }) : store.data.getRetention(projectId, ids);
    process.stdout.write(`${JSON.stringify(setting)}\n`);
  });
}
