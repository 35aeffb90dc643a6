// tracelake itself, answering the workload through its library API (the same request bodies the
// HTTP API takes). Loads like the raw DuckDB peer (logTraces with reliable: true), then seals and
// compacts: the state a store settles in. Every ratio of the peer table is taken against this peer.
import type { Question, SpanBatch } from '../workload.js';
import { spanSegments } from './duckdb-raw-peer.js';
import { LibraryLoad } from './library-load.js';
import { folderBytes, type Answer, type Peer } from './peer.js';

export class TracelakePeer implements Peer {
  readonly name = 'tracelake';
  #load: LibraryLoad | null = null;

  async setup(dir: string): Promise<void> {
    this.#load = await LibraryLoad.open(dir);
  }

  async adopt(load: LibraryLoad): Promise<void> {
    this.#load = load;
  }

  async insert(batch: SpanBatch): Promise<void> {
    await this.#load!.insert(batch);
  }

  async finishLoad(): Promise<void> {
    await this.#load!.settle();
  }

  async ask(q: Question, variant: number): Promise<Answer> {
    const { store, projectId, logStreamId } = this.#load!;
    const call = q.api(q.variants[variant % q.variants.length]!);
    const level = call.level === 'traces' ? 'trace' : 'span';
    const body = { ...call.body, log_stream_id: logStreamId };
    switch (call.op) {
      case 'count':
        return { count: (await store.count(level, projectId, body)).total_count };
      case 'partial_search':
        return { ids: (await store.partialSearch(level, projectId, body)).records.map((r) => String(r['id'])) };
      case 'delete':
        return { count: (await store.records.delete(level, projectId, body)).deleted };
      case 'available_columns': {
        const { columns } = await store.records.availableColumns(level, projectId, { log_stream_id: logStreamId });
        const names = columns.filter((c) => c.id.startsWith('metrics/')).map((c) => c.id.slice('metrics/'.length));
        return { ids: names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
      }
    }
  }

  async diskBytes(): Promise<number> {
    // Span segments and their id files and filters, like the other peers (trace and session records not counted).
    const dir = this.#load!.dir;
    const spans = new Set(spanSegments(dir).flatMap((f) => [f, f.replace(/\.parquet$/, '.ids'), f.replace(/\.parquet$/, '.idf')]));
    return folderBytes(dir, (p) => spans.has(p));
  }

  async close(): Promise<void> {
    await this.#load?.store.close();
    this.#load = null;
  }
}
