// A small SVG chart of series over time buckets: bars (stacked when several series), or lines.
// Hovering a bucket shows its values; clicking one calls onPick (the overview opens the table
// filtered to it). Each chart exports its data as CSV and itself as SVG or PNG. Drawn by hand: the few
// shapes the overview needs cost less script than any chart library.
import { useRef, useState } from 'preact/hooks';
import { toCsv, type Series } from '../lib/overview.js';

export const PALETTE = ['#2459d6', '#d97706', '#15803d', '#be123c', '#7c3aed', '#0f766e', '#b45309', '#475569'];

const W = 640;
const H = 200;
const PAD = { left: 56, right: 8, top: 8, bottom: 22 };

export interface ChartProps {
  title: string;
  buckets: string[];
  series: Series[];
  kind: 'bars' | 'lines';
  format: (v: number) => string;
  /** A bucket's label on the axis and in the readout. */
  label: (bucket: string) => string;
  onPick?: (bucket: number, series: string | null) => void;
}

function download(name: string, data: Blob): void {
  const url = URL.createObjectURL(data);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Style properties the page's stylesheet gives the chart's shapes and text. */
const DRAWN = ['fill', 'stroke', 'stroke-width', 'font-size', 'font-family', 'opacity'];

/**
 * The chart as a file of its own: the page's styles written onto each shape (a file does not load
 * the stylesheet), without the invisible hover targets.
 */
function standalone(svg: SVGSVGElement): string {
  const copy = svg.cloneNode(true) as SVGSVGElement;
  const from = svg.querySelectorAll('*');
  const to = copy.querySelectorAll('*');
  from.forEach((el, i) => {
    const style = getComputedStyle(el);
    const target = to[i] as SVGElement;
    for (const p of DRAWN) target.style.setProperty(p, style.getPropertyValue(p));
  });
  for (const hit of copy.querySelectorAll('.chart-hit')) hit.remove();
  copy.setAttribute('width', String(W));
  copy.setAttribute('height', String(H));
  return new XMLSerializer().serializeToString(copy);
}

/** The chart drawn at twice its size on the card's background, as PNG. */
async function png(svg: SVGSVGElement): Promise<Blob> {
  const scale = 2;
  const img = new Image();
  await new Promise((resolve, reject) => {
    img.onload = resolve;
    img.onerror = () => reject(new Error('the chart could not be drawn'));
    // A data: URL: the viewer's Content-Security-Policy admits images from data: but not blob:.
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(standalone(svg))}`;
  });
  const canvas = document.createElement('canvas');
  canvas.width = W * scale;
  canvas.height = H * scale;
  const ctx = canvas.getContext('2d')!;
  ctx.fillStyle = getComputedStyle(svg.parentElement ?? svg).backgroundColor || '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
  return await new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the chart could not be saved as PNG'))), 'image/png'),
  );
}

const fileName = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, '-');

export function Chart({ title, buckets, series, kind, format, label, onPick }: ChartProps) {
  const [hover, setHover] = useState<number | null>(null);
  const svg = useRef<SVGSVGElement>(null);
  const n = buckets.length;
  const stacked = kind === 'bars';
  const tops = buckets.map((_, i) =>
    stacked ? series.reduce((a, s) => a + (s.values[i] ?? 0), 0) : Math.max(0, ...series.map((s) => s.values[i] ?? 0)),
  );
  const max = Math.max(0, ...tops) || 1;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const step = n > 0 ? plotW / n : plotW;
  const x = (i: number) => PAD.left + i * step;
  const y = (v: number) => PAD.top + plotH - (v / max) * plotH;
  const ticks = [0, max / 2, max];
  const labelEvery = Math.max(1, Math.ceil(n / 6));
  const readout =
    hover === null
      ? null
      : `${label(buckets[hover]!)}: ${series.map((s) => `${s.name} ${s.values[hover] === null ? '–' : format(s.values[hover]!)}`).join(', ')}`;

  return (
    <figure class="chart" data-chart={title}>
      <figcaption>
        <span class="chart-title">{title}</span>
        <span class="grow" />
        <button
          type="button"
          class="small"
          onClick={() => download(`${fileName(title)}.csv`, new Blob([toCsv(buckets, series)], { type: 'text/csv' }))}
        >
          CSV
        </button>
        <button
          type="button"
          class="small"
          onClick={() => svg.current && download(`${fileName(title)}.svg`, new Blob([standalone(svg.current)], { type: 'image/svg+xml' }))}
        >
          SVG
        </button>
        <button
          type="button"
          class="small"
          onClick={() => {
            if (svg.current) png(svg.current).then((b) => download(`${fileName(title)}.png`, b), console.error);
          }}
        >
          PNG
        </button>
      </figcaption>
      <p class="chart-readout muted" aria-live="polite">
        {readout ??
          (series.length > 1
            ? series.map((s, k) => (
                <span key={s.name} class="legend">
                  <svg width="10" height="10" aria-hidden="true">
                    <rect width="10" height="10" fill={PALETTE[k % PALETTE.length]} />
                  </svg>
                  {s.name}
                </span>
              ))
            : ' ')}
      </p>
      <svg
        ref={svg}
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={title}
        xmlns="http://www.w3.org/2000/svg"
        onMouseLeave={() => setHover(null)}
      >
        {ticks.map((t) => (
          <g key={t}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(t)} y2={y(t)} class="chart-grid" />
            <text x={PAD.left - 4} y={y(t) + 4} text-anchor="end" class="chart-axis">
              {format(t)}
            </text>
          </g>
        ))}
        {buckets.map((b, i) =>
          i % labelEvery === 0 ? (
            <text key={b} x={x(i) + step / 2} y={H - 6} text-anchor="middle" class="chart-axis">
              {label(b)}
            </text>
          ) : null,
        )}
        {buckets.map((b, i) => (
          // biome-ignore lint/a11y/useSemanticElements: an SVG shape cannot be a <button> element
          <rect
            key={`hit${b}`}
            class={hover === i ? 'chart-hit hover' : 'chart-hit'}
            data-bucket={b}
            x={x(i)}
            width={step}
            y={PAD.top}
            height={plotH}
            fill="transparent"
            role="button"
            tabIndex={0}
            aria-label={`${label(b)}: open these records`}
            onMouseEnter={() => setHover(i)}
            onFocus={() => setHover(i)}
            onClick={() => onPick?.(i, null)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') onPick?.(i, null);
            }}
          />
        ))}
        {kind === 'bars' &&
          buckets.map((b, i) => {
            let base = 0;
            return series.map((s, k) => {
              const v = s.values[i] ?? 0;
              if (v <= 0) return null;
              const top = base + v;
              const rect = (
                // biome-ignore lint/a11y/useSemanticElements: an SVG shape cannot be a <button> element
                <rect
                  key={`${b}|${s.name}`}
                  class="chart-bar"
                  data-series={s.name}
                  x={x(i) + step * 0.1}
                  width={Math.max(1, step * 0.8)}
                  y={y(top)}
                  height={Math.max(0.5, y(base) - y(top))}
                  fill={PALETTE[k % PALETTE.length]}
                  role="button"
                  aria-label={`${label(b)}, ${s.name}: open these records`}
                  onMouseEnter={() => setHover(i)}
                  onClick={(e) => {
                    e.stopPropagation();
                    onPick?.(i, series.length > 1 ? s.name : null);
                  }}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') onPick?.(i, series.length > 1 ? s.name : null);
                  }}
                />
              );
              base = top;
              return rect;
            });
          })}
        {kind === 'lines' &&
          series.map((s, k) => {
            let d = '';
            s.values.forEach((v, i) => {
              if (v === null) return;
              const prev = i > 0 ? s.values[i - 1] : null;
              d += `${prev === null || prev === undefined ? 'M' : 'L'}${(x(i) + step / 2).toFixed(1)},${y(v).toFixed(1)}`;
            });
            const color = PALETTE[k % PALETTE.length];
            return (
              <g key={s.name} data-series={s.name} class="chart-line">
                <path d={d} fill="none" stroke={color} stroke-width="2" />
                {s.values.map((v, i) =>
                  v === null || (n > 60 && hover !== i) ? null : <circle key={i} cx={x(i) + step / 2} cy={y(v)} r="2.5" fill={color} />,
                )}
              </g>
            );
          })}
      </svg>
    </figure>
  );
}
