// Runs the peer benchmark on its own (bench/run.ts will call benchPeers the same way):
//   npx tsc -p tsconfig.json && node dist/bench/peers/main.js --size 1m [--runs 5] [--peers sqlite,duckdb-raw]
//     [--install-postgres] [--out bench/results]
// Prints the Markdown table and writes bench/results/<date>-<size>-peers.json.
import { parseArgs } from 'node:util';
import { machine, parseSize, writeResults } from '../common.js';
import { benchPeers, defaultPeers, peersTable } from './run-peers.js';

const { values } = parseArgs({
  options: {
    size: { type: 'string', default: '1m' },
    runs: { type: 'string', default: '5' },
    peers: { type: 'string' },
    'install-postgres': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
    tmp: { type: 'string' },
  },
});

const size = values.size!;
const spans = parseSize(size);
const wanted = values.peers ? new Set(values.peers.split(',')) : null;
const peers = defaultPeers({ installPostgres: values['install-postgres'] }).filter((p) => wanted === null || wanted.has(p.name));
const started = new Date().toISOString();
const t0 = performance.now();
const results = await benchPeers(spans, { peers, runs: Number(values.runs), ...(values.tmp ? { tmpDir: values.tmp } : {}) });
const table = `### Peers, ${size} spans (${started.slice(0, 10)})\n\n${peersTable(results)}`;
process.stdout.write(`${table}\n`);
const file = writeResults(values.out!, `${size}-peers`, { size, spans, started, seconds: (performance.now() - t0) / 1000, machine: machine(), results, table });
process.stderr.write(`wrote ${file}\n`);
const disagreements = (results['agreement'] ?? []).filter((a) => a.value !== 1);
if (disagreements.length > 0) {
  process.stderr.write(`${disagreements.length} question(s) without agreement across peers\n`);
  process.exitCode = 1;
}
