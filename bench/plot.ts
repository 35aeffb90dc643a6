// Latency by size for the main questions of the peer benchmark, as one SVG (no dependencies):
//   npm run build && node dist/bench/plot.js [--results bench/results,bench/results/history,bench/peers/results] [--out bench/results/latency-by-size.svg]
// Each point is the newest figure for its peer, question and size among the result files
// (`<date>-<size>.json` from `npm run bench`, `<date>-<size>-peers.json` from bench/peers/main.ts);
// one panel per question: spans on the x axis, median milliseconds on the y axis, both logarithmic.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseSize } from './common.js';
import { QUESTIONS as WORKLOAD } from './workload.js';

const QUESTIONS: [string, string][] = [
  ['count-tree', 'count, three-leaf filter tree'],
  ['page-filtered', 'first page, filtered'],
  ['page-sorted-metric', 'first page sorted by a metric'],
  ['text-count', 'text search: count'],
  ['rollup-trace', 'roll-up per trace, top 100'],
  ['delete-filter', 'delete 1% by filter'],
];
const COLORS: Record<string, string> = { tracelake: '#d62728', 'duckdb-raw': '#ff7f0e', sqlite: '#1f77b4', postgres: '#2ca02c' };

interface Measurement {
  name: string;
  value: number;
  question?: string;
}

const TITLES = new Map(WORKLOAD.map((q) => [q.id, q.title]));

/** peer -> question -> spans -> median ms */
type Series = Map<string, Map<string, Map<number, number>>>;

function collect(dirs: readonly string[]): Series {
  // Every result file with peer figures, newest first (names start with the date; the first folder
  // given wins a tie): each point is the newest figure for that peer, question and size.
  const files: { date: string; size: string; path: string; rank: number }[] = [];
  dirs.forEach((dir, rank) => {
    for (const f of readdirSync(dir)) {
      const m = /^(\d{4}-\d{2}-\d{2})-(.+?)(-peers)?\.json$/.exec(f);
      if (m) files.push({ date: m[1]!, size: m[2]!, path: join(dir, f), rank });
    }
  });
  files.sort((a, b) => (a.date === b.date ? a.rank - b.rank : a.date < b.date ? 1 : -1));
  const series: Series = new Map();
  for (const file of files) {
    const spans = parseSize(file.size);
    const { results } = JSON.parse(readFileSync(file.path, 'utf8')) as { results?: Record<string, Measurement[]> };
    for (const [key, ms] of Object.entries(results ?? {})) {
      const peer = key.replace(/^peers\//, '');
      if (!(peer in COLORS)) continue;
      for (const m of ms) {
        // A figure counts only if its title is the question's current one: when a question's
        // definition changed, so did its title, and older figures answer a different question.
        if (!m.question || !Number.isFinite(m.value) || TITLES.get(m.question) !== m.name) continue;
        const byQ = series.get(peer) ?? new Map<string, Map<number, number>>();
        series.set(peer, byQ);
        const bySize = byQ.get(m.question) ?? new Map<number, number>();
        byQ.set(m.question, bySize);
        if (!bySize.has(spans)) bySize.set(spans, m.value);
      }
    }
  }
  return series;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function render(series: Series): string {
  const W = 320;
  const H = 220;
  const pad = { l: 74, r: 16, t: 26, b: 36 };
  const cols = 3;
  const sizes = [...new Set([...series.values()].flatMap((q) => [...q.values()].flatMap((s) => [...s.keys()])))].sort((a, b) => a - b);
  const rows = Math.ceil(QUESTIONS.length / cols);
  const out: string[] = [];
  const legendH = 28;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W * cols}" height="${H * rows + legendH}" font-family="sans-serif" font-size="11">`,
  );
  out.push(`<rect width="100%" height="100%" fill="white"/>`);
  Object.entries(COLORS).forEach(([peer, color], i) => {
    out.push(`<rect x="${12 + i * 120}" y="9" width="14" height="3" fill="${color}"/><text x="${30 + i * 120}" y="14">${peer}</text>`);
  });
  QUESTIONS.forEach(([q, title], i) => {
    const ox = (i % cols) * W;
    const oy = legendH + Math.floor(i / cols) * H;
    const values = [...series.values()].flatMap((byQ) => [...(byQ.get(q)?.values() ?? [])]).filter((v) => v > 0);
    if (values.length === 0 || sizes.length === 0) return;
    const lo = Math.floor(Math.log10(Math.min(...values)));
    const hi = Math.ceil(Math.log10(Math.max(...values)));
    const xLo = Math.log10(sizes[0]!);
    const xHi = Math.log10(sizes[sizes.length - 1]!);
    const x = (n: number) => ox + pad.l + (xHi === xLo ? 0.5 : (Math.log10(n) - xLo) / (xHi - xLo)) * (W - pad.l - pad.r);
    const y = (v: number) => oy + H - pad.b - ((Math.log10(v) - lo) / Math.max(1, hi - lo)) * (H - pad.t - pad.b);
    out.push(`<text x="${ox + pad.l}" y="${oy + 16}" font-weight="bold">${esc(title)}</text>`);
    for (let e = lo; e <= hi; e++) {
      const v = 10 ** e;
      out.push(`<line x1="${ox + pad.l}" x2="${ox + W - pad.r}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
      out.push(`<text x="${ox + pad.l - 4}" y="${y(v) + 4}" text-anchor="end">${v >= 1 ? v.toLocaleString('en-US') : v} ms</text>`);
    }
    for (const n of sizes) {
      out.push(`<text x="${x(n)}" y="${oy + H - pad.b + 14}" text-anchor="middle">${n >= 1e6 ? `${n / 1e6}M` : `${n / 1e3}k`}</text>`);
    }
    for (const [peer, byQ] of series) {
      const pts = [...(byQ.get(q) ?? new Map<number, number>())].filter(([, v]) => v > 0).sort((a, b) => a[0] - b[0]);
      if (pts.length === 0) continue;
      out.push(
        `<polyline fill="none" stroke="${COLORS[peer]}" stroke-width="2" points="${pts.map(([n, v]) => `${x(n).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`,
      );
      for (const [n, v] of pts) out.push(`<circle cx="${x(n).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${COLORS[peer]}"/>`);
    }
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

const { values } = parseArgs({
  options: {
    // The latest runs, the earlier ones, and the peer harness's own.
    results: { type: 'string', default: 'bench/results,bench/results/history,bench/peers/results' },
    out: { type: 'string', default: 'bench/results/latency-by-size.svg' },
  },
});
const series = collect(values.results!.split(','));
writeFileSync(values.out!, render(series));
process.stderr.write(`wrote ${values.out} (${[...series.keys()].join(', ')})\n`);
