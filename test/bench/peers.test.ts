// Guarantees the peer benchmark's SQL formulations are equivalent: SQLite, raw DuckDB over tracelake's
// Parquet (and PostgreSQL when it can run here) give identical answers to every question, and the
// harness flags a peer that does not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Measurement } from '../../bench/common.js';
import { DuckDbRawPeer } from '../../bench/peers/duckdb-raw-peer.js';
import { PeerUnavailableError, type Answer, type Peer } from '../../bench/peers/peer.js';
import { PostgresPeer } from '../../bench/peers/postgres-peer.js';
import { benchPeers, peersTable } from '../../bench/peers/run-peers.js';
import { SqlitePeer } from '../../bench/peers/sqlite-peer.js';
import { TracelakePeer } from '../../bench/peers/tracelake-peer.js';
import { QUESTIONS, type Question, type SpanBatch } from '../../bench/workload.js';

const quiet = { runs: 1, warmups: 0, batchSpans: 500, log: () => {} };

function agreement(results: Record<string, Measurement[]>): Map<string, Measurement> {
  return new Map((results['agreement'] ?? []).map((m) => [String(m['question']), m]));
}

test('tracelake, SQLite, raw DuckDB and PostgreSQL agree on every question over 2,000 spans', async (t) => {
  const results = await benchPeers(2000, {
    ...quiet,
    peers: [new TracelakePeer(), new DuckDbRawPeer(), new SqlitePeer(), new PostgresPeer()],
  });
  const agree = agreement(results);
  assert.equal(agree.size, QUESTIONS.length + 1);
  assert.equal(agree.get('data')!.value, 1, 'every peer loaded the same spans');
  for (const q of QUESTIONS) {
    const a = agree.get(q.id)!;
    assert.equal(a.value, 1, `${q.id}: ${String(a['problems'])}`);
  }
  // Every question selects something on this set, so agreement is not agreement on nothing.
  for (const m of results['duckdb-raw']!.filter((x) => x['question'] !== undefined)) {
    assert.match(String(m['answer']), /^(count [1-9]\d*|[1-9]\d* ids)/, `${String(m['question'])} answered ${String(m['answer'])}`);
  }
  for (const name of ['tracelake', 'duckdb-raw', 'sqlite']) {
    assert.notEqual(results[name]![0]!.name, 'skipped', `${name} must run here`);
    assert.ok(results[name]!.find((m) => m.name === 'ingest')!.value > 0);
  }
  const pg = results['postgres']![0]!;
  await t.test('PostgreSQL took part', (st) => {
    if (pg.name === 'skipped') {
      st.skip(`PostgreSQL unavailable: ${String(pg['reason'])}`);
      return;
    }
    assert.notEqual(pg.name, 'failed', String(pg['reason']));
    for (const q of QUESTIONS) assert.ok(Number(agree.get(q.id)!['peers_compared']) === 4, `${q.id} compared across all four peers`);
  });
});

/** A peer that answers like SQLite, but wrong: one extra in every count, the last two ids swapped. */
class WrongPeer implements Peer {
  readonly name = 'wrong';
  readonly #inner = new SqlitePeer();
  setup(dir: string) {
    return this.#inner.setup(dir);
  }
  insert(b: SpanBatch) {
    return this.#inner.insert(b);
  }
  finishLoad() {
    return this.#inner.finishLoad();
  }
  async ask(q: Question, variant: number): Promise<Answer> {
    const a = await this.#inner.ask(q, variant);
    if (a.count !== undefined) return { count: a.count + 1 };
    const ids = [...a.ids!];
    if (ids.length >= 2) [ids[ids.length - 1], ids[ids.length - 2]] = [ids[ids.length - 2]!, ids[ids.length - 1]!];
    else ids.push('not-an-id');
    return { ids };
  }
  diskBytes() {
    return this.#inner.diskBytes();
  }
  close() {
    return this.#inner.close();
  }
}

test('the harness flags a peer whose answers differ, on every question', async () => {
  const results = await benchPeers(1000, { ...quiet, peers: [new DuckDbRawPeer(), new WrongPeer()] });
  const agree = agreement(results);
  for (const q of QUESTIONS) {
    const a = agree.get(q.id)!;
    assert.equal(a.value, 0, `${q.id} should disagree`);
    assert.match(String(a['problems']), /wrong vs duckdb-raw/);
  }
  const wrong = results['wrong']!.filter((m) => m['question'] !== undefined);
  assert.ok(wrong.length > 0 && wrong.every((m) => m['agree'] === false));
});

test('a peer that cannot run is skipped, and the table says why', async () => {
  const closed: string[] = [];
  const unavailable: Peer = {
    name: 'absent',
    setup: async () => {
      throw new PeerUnavailableError('no server binaries here');
    },
    insert: async () => assert.fail('insert after a failed setup'),
    finishLoad: async () => assert.fail('finishLoad after a failed setup'),
    ask: async () => assert.fail('ask after a failed setup'),
    diskBytes: async () => 0,
    close: async () => {
      closed.push('absent');
    },
  };
  const results = await benchPeers(300, { ...quiet, peers: [new SqlitePeer(), unavailable] });
  assert.deepEqual(closed, ['absent'], 'close runs after a failed setup');
  assert.equal(results['absent']![0]!.name, 'skipped');
  assert.match(peersTable(results), /\*\*absent skipped\*\*: no server binaries here/);
  assert.ok(results['sqlite']!.some((m) => m.name === 'ingest'));
});
