// A trace's spans as a tree (built on the client from parent_id), the rows visible when some nodes
// are collapsed, their timeline bars, and the WAI-ARIA tree keys. Iterative throughout: traces can
// be 128 levels deep and tens of thousands of spans wide (DOM-free: unit-tested under Node).

export interface SpanLite {
  id: string;
  parentId: string | null;
  type: string;
  name: string;
  /** Start, epoch milliseconds. */
  start: number;
  /** Duration in nanoseconds: as logged, or for a span that logged none, the time its descendants cover. */
  durationNs: number | null;
  /** The duration was not logged but derived from the descendants (set by buildTree). */
  derived?: boolean;
  error: boolean;
  step: number;
}

export interface TreeNode {
  span: SpanLite;
  children: TreeNode[];
  parent: TreeNode | null;
  depth: number;
}

export interface SpanTree {
  root: TreeNode;
  byId: Map<string, TreeNode>;
  /** Earliest start and latest end (ms) over every node: the timeline's extent. */
  start: number;
  end: number;
  /** Spans whose parent was not among the loaded spans, hung under the root (once loading is complete). */
  orphans: number;
  /** Spans left out while loading because their parent has not arrived yet. */
  waiting: number;
}

export const endOf = (s: SpanLite): number => s.start + (s.durationNs ?? 0) / 1e6;

/**
 * `complete` false (more pages to come): a span whose parent has not arrived is left out, with its
 * descendants, rather than shown under the root and moved when the parent arrives.
 */
export function buildTree(rootSpan: SpanLite, spans: readonly SpanLite[], complete = true): SpanTree {
  const root: TreeNode = { span: rootSpan, children: [], parent: null, depth: 0 };
  const byId = new Map<string, TreeNode>([[rootSpan.id, root]]);
  for (const s of spans) if (!byId.has(s.id)) byId.set(s.id, { span: s, children: [], parent: null, depth: 0 });
  let orphans = 0;
  for (const s of spans) {
    const node = byId.get(s.id)!;
    if (node === root || node.parent) continue;
    let parent = s.parentId ? byId.get(s.parentId) : undefined;
    if (!parent && !complete && s.parentId && s.parentId !== rootSpan.id) continue;
    // A missing parent, or a link that would close a cycle, hangs the span under the root.
    for (let p: TreeNode | null | undefined = parent; p; p = p.parent) {
      if (p === node) {
        parent = undefined;
        break;
      }
    }
    if (!parent) {
      parent = root;
      if (s.parentId !== rootSpan.id) orphans++;
    }
    node.parent = parent;
    parent.children.push(node);
  }
  let start = rootSpan.start;
  const stack: TreeNode[] = [root];
  const order: TreeNode[] = [];
  while (stack.length) {
    const n = stack.pop()!;
    order.push(n);
    n.children.sort((a, b) => a.span.start - b.span.start || a.span.step - b.span.step);
    for (const c of n.children) {
      c.depth = n.depth + 1;
      stack.push(c);
    }
    if (n.span.start < start) start = n.span.start;
  }
  const reached = order.length;
  // Children come after their parent in `order`: walking it backwards sees every subtree before its
  // root. A span that logged no duration covers the time of its descendants.
  const subtreeEnd = new Map<TreeNode, number>();
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i]!;
    let e = endOf(n.span);
    for (const c of n.children) e = Math.max(e, subtreeEnd.get(c)!);
    subtreeEnd.set(n, e);
    if (n.span.durationNs === null && n.children.length)
      n.span = { ...n.span, durationNs: Math.max(e - n.span.start, 0) * 1e6, derived: true };
  }
  const end = subtreeEnd.get(root)!;
  // Spans under a parent that is still waiting for its own parent are not in the tree yet either.
  let waiting = 0;
  if (reached < byId.size) {
    for (const [id, n] of byId) {
      let top = n;
      while (top.parent) top = top.parent;
      if (top !== root) {
        byId.delete(id);
        waiting++;
      }
    }
  }
  return { root, byId, start, end, orphans, waiting };
}

export interface Row {
  node: TreeNode;
  /** 1-based position among its siblings, and their number (aria-posinset / aria-setsize). */
  pos: number;
  size: number;
}

/** The rows shown, depth first, skipping the descendants of collapsed nodes. */
export function visibleRows(root: TreeNode, collapsed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  const stack: Row[] = [{ node: root, pos: 1, size: 1 }];
  while (stack.length) {
    const row = stack.pop()!;
    rows.push(row);
    const kids = row.node.children;
    if (kids.length && !collapsed.has(row.node.span.id)) {
      for (let i = kids.length - 1; i >= 0; i--) stack.push({ node: kids[i]!, pos: i + 1, size: kids.length });
    }
  }
  return rows;
}

/** Every node id that has children (to collapse all). */
export function parentIds(tree: SpanTree): Set<string> {
  const out = new Set<string>();
  for (const [id, n] of tree.byId) if (n.children.length) out.add(id);
  return out;
}

/** Ids of the ancestors of a node (to reveal it). */
export function ancestorIds(node: TreeNode): string[] {
  const out: string[] = [];
  for (let p = node.parent; p; p = p.parent) out.push(p.span.id);
  return out;
}

/** A span's bar on the trace's timeline, as fractions of the lane (a minimum width keeps it visible). */
export function bar(span: SpanLite, start: number, end: number): { left: number; width: number } {
  const total = Math.max(end - start, 1e-6);
  const left = Math.min(Math.max((span.start - start) / total, 0), 1);
  const width = Math.max(Math.min((span.durationNs ?? 0) / 1e6 / total, 1 - left), 0.002);
  return { left, width };
}

export type TreeAction =
  | { kind: 'move'; index: number }
  | { kind: 'expand'; id: string }
  | { kind: 'collapse'; id: string; index: number }
  | { kind: 'expand-siblings'; ids: string[] }
  | { kind: 'none' };

/**
 * What a key does in a tree (WAI-ARIA APG tree view): Up/Down move, Right expands or enters the
 * first child, Left collapses or goes to the parent, Home/End, PageUp/PageDown by `page` rows,
 * `*` expands the siblings of the active row.
 */
export function treeKey(key: string, rows: readonly Row[], active: number, collapsed: ReadonlySet<string>, page = 10): TreeAction {
  const last = rows.length - 1;
  const row = rows[active];
  if (!row) return rows.length ? { kind: 'move', index: 0 } : { kind: 'none' };
  const id = row.node.span.id;
  const hasKids = row.node.children.length > 0;
  const open = hasKids && !collapsed.has(id);
  switch (key) {
    case 'ArrowDown':
      return { kind: 'move', index: Math.min(active + 1, last) };
    case 'ArrowUp':
      return { kind: 'move', index: Math.max(active - 1, 0) };
    case 'Home':
      return { kind: 'move', index: 0 };
    case 'End':
      return { kind: 'move', index: last };
    case 'PageDown':
      return { kind: 'move', index: Math.min(active + page, last) };
    case 'PageUp':
      return { kind: 'move', index: Math.max(active - page, 0) };
    case 'ArrowRight':
      if (!hasKids) return { kind: 'none' };
      return open ? { kind: 'move', index: active + 1 } : { kind: 'expand', id };
    case 'ArrowLeft': {
      if (open) return { kind: 'collapse', id, index: active };
      const parent = row.node.parent;
      if (!parent) return { kind: 'none' };
      for (let i = active - 1; i >= 0; i--) if (rows[i]!.node === parent) return { kind: 'move', index: i };
      return { kind: 'none' };
    }
    case '*': {
      const siblings = row.node.parent ? row.node.parent.children : [row.node];
      return { kind: 'expand-siblings', ids: siblings.filter((n) => n.children.length).map((n) => n.span.id) };
    }
    default:
      return { kind: 'none' };
  }
}

/** The rows to render for a scroll position: the visible ones plus `overscan` on each side. */
export function windowRange(
  scrollTop: number,
  viewport: number,
  rowHeight: number,
  count: number,
  overscan = 10,
): { start: number; end: number } {
  const first = Math.floor(Math.max(scrollTop, 0) / rowHeight);
  const visible = Math.ceil(Math.max(viewport, rowHeight) / rowHeight) + 1;
  return { start: Math.max(first - overscan, 0), end: Math.min(first + visible + overscan, count) };
}

/** The scroll position that brings row `index` into view, or null when it already is. */
export function revealScroll(index: number, scrollTop: number, viewport: number, rowHeight: number): number | null {
  const top = index * rowHeight;
  if (top < scrollTop) return top;
  if (top + rowHeight > scrollTop + viewport) return top + rowHeight - viewport;
  return null;
}
