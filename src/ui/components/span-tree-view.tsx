// The span tree as a WAI-ARIA tree, windowed: only the rows in view (plus a margin, plus the active
// row) are in the DOM, each absolutely placed, so a 20,000-span trace costs what a 50-span one does.
// Focus stays on the tree; aria-activedescendant names the active row. Each row carries its level,
// position and set size, since most of its siblings are not in the DOM. A bar per row draws the
// span's place on the trace's timeline.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { formatDuration } from '../lib/format.js';
import { bar, revealScroll, treeKey, windowRange, type Row, type SpanTree } from '../lib/span-tree.js';

export const ROW_HEIGHT = 28;
const OVERSCAN = 12;
const INDENT = 14;

interface Props {
  /** Spans are still arriving. */
  busy: boolean;
  tree: SpanTree;
  rows: Row[];
  selectedId: string;
  collapsed: ReadonlySet<string>;
  onSelect: (id: string) => void;
  onCollapsed: (next: Set<string>) => void;
}

export function SpanTreeView({ busy, tree, rows, selectedId, collapsed, onSelect, onCollapsed }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const indexOf = useMemo(() => new Map(rows.map((r, i) => [r.node.span.id, i])), [rows]);
  const active = indexOf.get(selectedId) ?? 0;

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    setHeight(el.clientHeight);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  // Keep the active row in view when it changes (keys, a link with ?span=, expanding).
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const top = revealScroll(active, el.scrollTop, el.clientHeight, ROW_HEIGHT);
    if (top !== null) {
      el.scrollTop = top;
      setScrollTop(top);
    }
  }, [active, rows]);

  const toggle = (id: string) => {
    const next = new Set(collapsed);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    onCollapsed(next);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      const row = rows[active];
      if (row?.node.children.length) toggle(row.node.span.id);
      return;
    }
    const page = Math.max(Math.floor(height / ROW_HEIGHT) - 1, 1);
    const action = treeKey(e.key, rows, active, collapsed, page);
    if (action.kind === 'none') return;
    e.preventDefault();
    if (action.kind === 'move') {
      const row = rows[action.index];
      if (row) onSelect(row.node.span.id);
    } else if (action.kind === 'expand') {
      const next = new Set(collapsed);
      next.delete(action.id);
      onCollapsed(next);
    } else if (action.kind === 'collapse') {
      const next = new Set(collapsed);
      next.add(action.id);
      onCollapsed(next);
    } else {
      const next = new Set(collapsed);
      for (const id of action.ids) next.delete(id);
      onCollapsed(next);
    }
  };

  const { start, end } = windowRange(scrollTop, height, ROW_HEIGHT, rows.length, OVERSCAN);
  const shown: number[] = [];
  if (active < start) shown.push(active);
  for (let i = start; i < end; i++) shown.push(i);
  if (active >= end && active < rows.length) shown.push(active);

  return (
    <div
      ref={box}
      class="tree"
      role="tree"
      aria-label="Spans"
      aria-busy={busy}
      tabIndex={0}
      aria-activedescendant={rows[active] ? `row-${rows[active]!.node.span.id}` : undefined}
      onKeyDown={onKeyDown}
      onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
    >
      <div class="tree-space" style={{ height: `${rows.length * ROW_HEIGHT}px` }}>
        {shown.map((i) => {
          const row = rows[i]!;
          const { span, children, depth } = row.node;
          const hasKids = children.length > 0;
          const open = hasKids && !collapsed.has(span.id);
          const b = bar(span, tree.start, tree.end);
          const selected = i === active;
          return (
            // biome-ignore lint/a11y/useKeyWithClickEvents lint/a11y/useFocusableInteractive: the tree box holds focus and keys; rows take clicks
            <div
              key={span.id}
              id={`row-${span.id}`}
              role="treeitem"
              aria-level={depth + 1}
              aria-posinset={row.pos}
              aria-setsize={row.size}
              aria-expanded={hasKids ? open : undefined}
              aria-selected={selected}
              class={`tree-row${selected ? ' selected' : ''}${span.error ? ' failed' : ''}`}
              style={{ top: `${i * ROW_HEIGHT}px` }}
              onClick={() => {
                onSelect(span.id);
                box.current?.focus({ preventScroll: true });
              }}
            >
              <span class="tree-label">
                <span class="indent" style={{ width: `${depth * INDENT}px` }} />
                <span
                  class={`twisty${hasKids ? '' : ' leaf'}`}
                  aria-hidden="true"
                  onClick={(e) => {
                    if (!hasKids) return;
                    e.stopPropagation();
                    toggle(span.id);
                  }}
                >
                  {hasKids ? (open ? '▾' : '▸') : ''}
                </span>
                <span class={`kind kind-${span.type.replace(/[^a-z_]/g, '')}`}>{span.type}</span>
                <span class="span-name">{span.name || '(unnamed)'}</span>
                {span.error && (
                  <span class="error-mark" title="failed">
                    !
                  </span>
                )}
              </span>
              <span
                class={span.derived ? 'tree-duration derived' : 'tree-duration'}
                title={span.derived ? 'no duration logged: the time its spans cover' : undefined}
              >
                {formatDuration(span.durationNs)}
              </span>
              <span class="lane" aria-hidden="true">
                <span
                  class={`bar kind-bg-${span.type.replace(/[^a-z_]/g, '')}`}
                  style={{ left: `${b.left * 100}%`, width: `${b.width * 100}%` }}
                />
              </span>
            </div>
          );
        })}
      </div>
    </div>
  );
}
