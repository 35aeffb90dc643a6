// Runs the peer benchmark on its own (bench/run.ts will call benchPeers the same way):
//   npx tsc -p tsconfig.json && node dist/bench/peers/main.js --size 1m [--runs 5] [--peers sqlite,duckdb-raw]
//     [--install-postgres] [--plans] [--out bench/results]
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
    plans: { type: 'boolean', default: false },
  },
});

const size = values.size!;
const spans = parseSize(size);
const wanted = values.peers ? new Set(values.peers.split(',')) : null;
const peers = defaultPeers({ installPostgres: values['install-postgres'] }).filter((p) => wanted === null || wanted.has(p.name));
const started = new Date().toISOString();
const t0 = performance.now();
const results = await benchPeers(spans, {
  peers,
  runs: Number(values.runs),
  plans: values.plans,
  ...(values.tmp ? { tmpDir: values.tmp } : {}),
});
let table = `### Peers, ${size} spans (${started.slice(0, 10)})\n\n${peersTable(results)}`;
if (values.plans) {
  table += '\n#### Query plans\n';
  for (const [peer, ms] of Object.entries(results)) {
    for (const m of ms)
      if (Array.isArray(m['plan']))
        table += `\n${peer}, ${String(m['question'])}:\n\n\`\`\`\n${(m['plan'] as string[]).join('\n')}\n\`\`\`\n`;
  }
}
process.stdout.write(`${table}\n`);
const file = writeResults(values.out!, `${size}-peers`, {
  size,
  spans,
  started,
  seconds: (performance.now() - t0) / 1000,
  machine: machine(),
  results,
  table,
});
process.stderr.write(`wrote ${file}\n`);
const disagreements = (results['agreement'] ?? []).filter((a) => a.value !== 1);
if (disagreements.length > 0) {
  process.stderr.write(`${disagreements.length} question(s) without agreement across peers\n`);
  process.exitCode = 1;
}
