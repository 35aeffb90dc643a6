// npm run bench -- [--size 10k|100k|1m|10m] [--data-dir /keep/store] [--questions count-tree,delete-filter]
//   [--only ingest,ingest-library,ingest-http,ingest-reads,peers,scorers,shapes,costs] [--settle 300] [--shapes-size 100k]
//   [--shapes-match 'issue|by text'] [--shapes-dir keep/here] [--peers tracelake,duckdb-raw,sqlite,postgres] [--out bench/results]
// Peers over the opt-in text index: TRACELAKE_BENCH_TEXT_INDEX=1 (a --data-dir template without one builds it on open);
// with TRACELAKE_BENCH_TOKEN_COUNTS=0 too, counts as before the token index (bench/peers/library-load.ts).
// Runs the suites side by side in one process, prints a Markdown table and writes
// bench/results/<date>-<size>.json. Figures are only comparable within one run.
import { parseArgs } from 'node:util';
import { benchCosts } from './costs.js';
import { benchHttpIngest, benchHttpIngestWithReads, benchLibraryIngest } from './ingest.js';
import { benchPeers, defaultPeers, peersTable } from './peers/run-peers.js';
import { TracelakePeer } from './peers/tracelake-peer.js';
import { benchScorerList } from './scorers.js';
import { benchShapes } from './shapes.js';
import { QUESTIONS } from './workload.js';
import { fmt, machine, parseSize, writeResults, type Measurement } from './common.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1m' },
    only: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
    connections: { type: 'string', default: '4' },
    // ingest-reads: seconds to leave the server idle after ingest (its merges), then its memory again.
    settle: { type: 'string', default: '0' },
    runs: { type: 'string', default: '5' },
    'install-postgres': { type: 'boolean', default: false },
    peers: { type: 'string' },
    'shapes-size': { type: 'string', default: '100k' },
    'shapes-match': { type: 'string' },
    'shapes-dir': { type: 'string' },
    // Peers: a folder holding a settled tracelake store of this size, built on first use and copied
    // for each library peer (bench/peers/store-template.ts); and a subset of the questions by id.
    'data-dir': { type: 'string' },
    questions: { type: 'string' },
  },
});

const size = values.size!;
const spans = parseSize(size);
const only = values.only ? new Set(values.only.split(',')) : null;
const want = (s: string) => only === null || only.has(s);

const results: Record<string, Measurement[]> = {};
const started = new Date().toISOString();

// 'ingest' runs all three; 'ingest-library' and 'ingest-http' one side (the 10M library run alone).
if (want('ingest') || want('ingest-library')) {
  process.stderr.write(`ingest: library, ${spans} spans...\n`);
  (results['ingest'] ??= []).push(...(await benchLibraryIngest(spans)));
}
if (want('ingest') || want('ingest-http') || want('ingest-reads')) {
  process.stderr.write(`ingest: HTTP with a reader, ${spans} spans...\n`);
  (results['ingest'] ??= []).push(...(await benchHttpIngestWithReads(spans, Number(values.connections), 11, Number(values.settle))));
}
// 'ingest-reads': the reader phase alone (A/B runs of read latency during ingest).
if (want('ingest') || want('ingest-http')) {
  process.stderr.write(`ingest: HTTP, v2 JSON beside OTLP, ${spans} spans...\n`);
  (results['ingest'] ??= []).push(...(await benchHttpIngest(spans, Number(values.connections))));
}

let peers = '';
if (want('peers')) {
  process.stderr.write(`peers: ${values.peers ?? 'tracelake,duckdb-raw,sqlite,postgres'}, ${spans} spans...\n`);
  const wantedPeers = values.peers ? new Set(values.peers.split(',')) : null;
  const all = [new TracelakePeer(), ...defaultPeers({ installPostgres: values['install-postgres'] })];
  const chosen = all.filter((p) => wantedPeers === null || wantedPeers.has(p.name));
  const ids = values.questions ? new Set(values.questions.split(',')) : null;
  const questions = ids ? QUESTIONS.filter((q) => ids.has(q.id)) : undefined;
  if (questions && questions.length !== ids!.size)
    throw new Error(`unknown question in --questions: known are ${QUESTIONS.map((q) => q.id).join(', ')}`);
  const peerResults = await benchPeers(spans, {
    peers: chosen,
    runs: Number(values.runs),
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
    ...(questions ? { questions } : {}),
  });
  peers = peersTable(peerResults);
  Object.assign(results, Object.fromEntries(Object.entries(peerResults).map(([k, v]) => [`peers/${k}`, v])));
}

let shapeTable = '';
// Not part of a default run: asked for with --only shapes (its own size, --shapes-size).
if (only?.has('shapes')) {
  const n = parseSize(values['shapes-size']!);
  process.stderr.write(`shapes: every filter kind x type leaf x metric selection x sort, ${n} spans...\n`);
  const r = await benchShapes(n, Number(values.runs), values['shapes-match'], values['shapes-dir']);
  results['shapes'] = r.measurements;
  shapeTable = `\n\n#### Shapes at ${n} spans (ratio = tracelake / hand-written DuckDB over the same files; worst first)\n\n${r.table}`;
}

// Not part of a default run: a large template's open, memory, questions over HTTP, delete and stop.
if (only?.has('costs')) {
  if (!values['data-dir']) throw new Error('--only costs needs --data-dir (a template built for --size)');
  process.stderr.write(`costs: open, memory, questions over HTTP, delete, stop, over a copy of ${values['data-dir']}...\n`);
  results['costs'] = await benchCosts({ dataDir: values['data-dir'], runs: Number(values.runs), logSpans: 100_000 });
}

if (want('scorers')) {
  process.stderr.write('scorers: list 10,000 registered scorers with a filter and a sort...\n');
  results['scorers'] = await benchScorerList();
}

const lines = [
  `### ${size} spans (${started.slice(0, 10)})`,
  '',
  '| suite | measurement | value | unit | notes |',
  '|---|---|---:|---|---|',
];
for (const [suite, ms] of Object.entries(results)) {
  if (suite.startsWith('peers/') || suite === 'shapes') continue;
  for (const m of ms) {
    const { name, value, unit, ...rest } = m;
    const notes = Object.entries(rest)
      .filter(([, v]) => !Array.isArray(v)) // samples go to the JSON file only
      .map(([k, v]) => `${k}: ${typeof v === 'number' ? fmt(v) : String(v)}`)
      .join(', ');
    lines.push(`| ${suite} | ${name} | ${fmt(value)} | ${unit} | ${notes} |`);
  }
}
const table = `${lines.join('\n')}${peers ? `\n\n#### Peers (same data, same questions; ratio = peer / tracelake)\n\n${peers}` : ''}${shapeTable}`;
process.stdout.write(`${table}\n`);
const file = writeResults(values.out!, size, { size, spans, started, machine: machine(), results, table });
process.stderr.write(`wrote ${file}\n`);
