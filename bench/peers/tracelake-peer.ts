// tracelake itself, answering the workload through its library API (the same request bodies the
// HTTP API takes). Loads like the raw DuckDB peer (logTraces with reliable: true), then seals and
// compacts: the state a store settles in. Every ratio of the peer table is taken against this peer.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { TraceStore } from '../../src/engine/trace-store.js';
import type { LogTracesRequest } from '../../src/schemas/ingest.js';
import type { Question, SpanBatch } from '../workload.js';
import { spanSegments } from './duckdb-raw-peer.js';
import { folderBytes, type Answer, type Peer } from './peer.js';

export class TracelakePeer implements Peer {
  readonly name = 'tracelake';
  #dir = '';
  #store: TraceStore | null = null;
  #projectId = '';
  #logStreamId = '';

  async setup(dir: string): Promise<void> {
    this.#dir = join(dir, 'tracelake');
    mkdirSync(this.#dir, { recursive: true });
    this.#store = await TraceStore.open(this.#dir);
    const project = this.#store.createProject({ name: 'peers' });
    this.#projectId = project.id;
    this.#logStreamId = this.#store.createLogStream(project.id, 'bench').id;
  }

  async insert(batch: SpanBatch): Promise<void> {
    const body = { log_stream_id: this.#logStreamId, reliable: true, traces: batch.traces } as unknown as LogTracesRequest;
    await this.#store!.logTraces(this.#projectId, body);
  }

  async finishLoad(): Promise<void> {
    await this.#store!.flush();
    await this.#store!.compact();
  }

  async ask(q: Question, variant: number): Promise<Answer> {
    const store = this.#store!;
    const call = q.api(q.variants[variant % q.variants.length]!);
    const level = call.level === 'traces' ? 'trace' : 'span';
    const body = { ...call.body, log_stream_id: this.#logStreamId };
    switch (call.op) {
      case 'count':
        return { count: (await store.count(level, this.#projectId, body)).total_count };
      case 'partial_search':
        return { ids: (await store.partialSearch(level, this.#projectId, body)).records.map((r) => String(r['id'])) };
      case 'delete':
        return { count: (await store.delete(level, this.#projectId, body)).deleted };
      case 'available_columns': {
        const { columns } = await store.availableColumns(level, this.#projectId, { log_stream_id: this.#logStreamId });
        const names = columns.filter((c) => c.id.startsWith('metrics/')).map((c) => c.id.slice('metrics/'.length));
        return { ids: names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
      }
    }
  }

  async diskBytes(): Promise<number> {
    // Span segments and their id files, like the other peers (trace and session records not counted).
    const spans = new Set(spanSegments(this.#dir).flatMap((f) => [f, f.replace(/\.parquet$/, '.ids')]));
    return folderBytes(this.#dir, (p) => spans.has(p));
  }

  async close(): Promise<void> {
    await this.#store?.close();
    this.#store = null;
  }
}
