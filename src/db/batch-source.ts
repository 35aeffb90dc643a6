// Table functions that hand Arrow batches (and lists of sequence numbers) to DuckDB, so
// `INSERT INTO t SELECT * FROM tl_batches_1(7)` runs on a DuckDB worker thread: the main thread only
// fills data chunks when DuckDB asks for them (see arrow-chunks.ts), and the insert itself (the
// table append, statistics, commit) costs it nothing. An appender would do all of that on the main
// thread, where it was most of a row's cost. Keys are our own counters; no request data enters SQL.
import { BIGINT, BOOLEAN, DOUBLE, DuckDBTableFunction, INTEGER, LIST, MAP, TIMESTAMP, VARCHAR, type DuckDBType } from '../vendor/duckdb.js';
import duckdb from '@duckdb/node-bindings';
import type { RecordBatch } from 'apache-arrow';
import { VECTOR_SIZE, writeChunk, type AppendKind } from './arrow-chunks.js';

const DUCK_TYPE: Record<AppendKind, DuckDBType> = {
  i64: BIGINT,
  i32: INTEGER,
  f64: DOUBLE,
  bool: BOOLEAN,
  ts: TIMESTAMP,
  utf8: VARCHAR,
  tags: LIST(VARCHAR),
  map_f64: MAP(VARCHAR, DOUBLE),
  map_utf8: MAP(VARCHAR, VARCHAR),
};

export interface SourceColumn {
  readonly name: string;
  readonly kind: AppendKind;
}

/**
 * Numbers the sources of a process: table functions are registered on the database, and a name
 * registered again does not replace the first (a store reopened on the same database inserted through
 * its closed predecessor's source, so nothing).
 */
let sources = 0;

interface ScanState {
  batch: number;
  row: number;
}

/** Batches and seq lists waiting to be read by a statement, by key. */
export class BatchSource {
  readonly #batches = new Map<number, readonly RecordBatch[]>();
  readonly #seqs = new Map<number, readonly [Float64Array, Float64Array]>();
  #next = 0;
  readonly functions: DuckDBTableFunction[];
  /** Names of its table functions: batches by key (tl_batches_N) and seq lists by key (tl_seqs_N). */
  readonly batchesFn: string;
  readonly seqsFn: string;

  constructor(columns: readonly SourceColumn[]) {
    const kinds = columns.map((c) => c.kind);
    const n = ++sources;
    this.batchesFn = `tl_batches_${n}`;
    this.seqsFn = `tl_seqs_${n}`;
    const batches = DuckDBTableFunction.create({
      name: this.batchesFn,
      parameterTypes: [BIGINT],
      bindFunction: (info) => {
        for (const c of columns) info.addResultColumn(c.name, DUCK_TYPE[c.kind]);
        info.setBindData({ key: Number(info.getParameter(0) as bigint) });
      },
      initFunction: (info) => info.setInitData({ batch: 0, row: 0 } satisfies ScanState),
      mainFunction: (info, out) => {
        const key = (info.getBindData() as { key: number }).key;
        const state = info.getInitData() as ScanState;
        const list = this.#batches.get(key) ?? [];
        while (state.batch < list.length && state.row >= list[state.batch]!.numRows) {
          state.batch++;
          state.row = 0;
        }
        if (state.batch >= list.length) {
          out.rowCount = 0;
          return;
        }
        const batch = list[state.batch]!;
        const count = Math.min(VECTOR_SIZE, batch.numRows - state.row);
        writeChunk(out.chunk, kinds, batch, state.row, count);
        state.row += count;
      },
    });
    const seqs = DuckDBTableFunction.create({
      name: this.seqsFn,
      parameterTypes: [BIGINT],
      bindFunction: (info) => {
        info.addResultColumn('seq', BIGINT);
        info.addResultColumn('clock', BIGINT);
        info.setBindData({ key: Number(info.getParameter(0) as bigint) });
      },
      initFunction: (info) => info.setInitData({ batch: 0, row: 0 } satisfies ScanState),
      mainFunction: (info, out) => {
        const key = (info.getBindData() as { key: number }).key;
        const state = info.getInitData() as ScanState;
        const lists = this.#seqs.get(key) ?? [new Float64Array(0), new Float64Array(0)];
        const count = Math.min(VECTOR_SIZE, lists[0].length - state.row);
        if (count <= 0) {
          out.rowCount = 0;
          return;
        }
        lists.forEach((list, c) => {
          const vals = new BigInt64Array(count);
          for (let i = 0; i < count; i++) vals[i] = BigInt(list[state.row + i]!);
          duckdb.copy_data_to_vector(duckdb.data_chunk_get_vector(out.chunk, c), 0, vals.buffer, 0, count * 8);
        });
        duckdb.data_chunk_set_size(out.chunk, count);
        state.row += count;
      },
    });
    this.functions = [batches, seqs];
  }

  /** Makes batches readable as `<batchesFn>(key)` until `release(key)`. */
  addBatches(batches: readonly RecordBatch[]): number {
    const key = ++this.#next;
    this.#batches.set(key, batches);
    return key;
  }

  /** Makes sequence numbers, each with a number `clock` (0 if not given), readable as `<seqsFn>(key)` until `release(key)`. */
  addSeqs(seqs: ArrayLike<number>, at?: ArrayLike<number>): number {
    const key = ++this.#next;
    const s = Float64Array.from(seqs);
    const a = at ? Float64Array.from(at) : new Float64Array(s.length);
    if (a.length !== s.length) throw new Error('addSeqs: seqs and at differ in length');
    this.#seqs.set(key, [s, a]);
    return key;
  }

  release(key: number): void {
    this.#batches.delete(key);
    this.#seqs.delete(key);
  }
}
