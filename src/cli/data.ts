// `tracelake sql | export | import`: data in and out of a folder no server holds (they open it).
import { parseArgs } from 'node:util';
import { TraceStore } from '../engine/trace-store.js';
import { dataDir } from './options.js';

async function withStore<T>(dir: string | undefined, fn: (store: TraceStore) => Promise<T>): Promise<T> {
  const store = await TraceStore.open(dataDir(dir));
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
  const s = typeof v === 'string' ? v : v instanceof Date ? v.toISOString() : typeof v === 'object' ? JSON.stringify(v, jsonValue) : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** `tracelake sql "SELECT ..." [--param V]... [--format jsonl|json|csv]`: rows to stdout. */
export async function sqlCommand(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { data: { type: 'string' }, param: { type: 'string', multiple: true }, format: { type: 'string' } },
  });
  const query = positionals[0];
  if (!query || positionals.length > 1) throw new Error('usage: tracelake sql "SELECT ..." (one query, quoted)');
  const format = values.format ?? 'jsonl';
  if (!['jsonl', 'json', 'csv'].includes(format)) throw new Error(`invalid --format: ${format} (jsonl, json or csv)`);
  const rows = await withStore(values.data, (store) => store.sql(query, values.param ?? []));
  const out = process.stdout;
  if (format === 'json') out.write(`${JSON.stringify(rows, jsonValue, 2)}\n`);
  else if (format === 'jsonl') for (const r of rows) out.write(`${JSON.stringify(r, jsonValue)}\n`);
  else {
    const cols = rows.length > 0 ? Object.keys(rows[0]!) : [];
    out.write(`${cols.map(csvCell).join(',')}\n`);
    for (const r of rows) out.write(`${cols.map((c) => csvCell(r[c])).join(',')}\n`);
  }
}
