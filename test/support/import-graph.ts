// The import graph of a source tree and the two checks run over it: cycles, and edges that go from
// a lower layer to a higher one. Imports are read with TypeScript's parser, so static, re-export,
// dynamic (`import('x')`) and type-position (`import('x').T`) imports all count, type-only ones too:
// a cycle or an upward edge made only of types still ties the two rooms' concepts together.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** file (relative to the root, '/'-separated) -> the files it imports. */
export type Graph = Map<string, Set<string>>;

/**
 * Relative module specifiers a source text imports, in any form. A computed import() is refused unless
 * `computedOk` (a file that loads a build output, not a source, that way).
 */
export function importSpecifiers(text: string, fileName = 'x.ts', computedOk = false): string[] {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      out.push(node.moduleSpecifier.text);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      // A computed specifier cannot be followed: refuse it rather than let an edge go unseen.
      if (arg && ts.isStringLiteralLike(arg)) out.push(arg.text);
      else if (!computedOk) throw new Error(`${fileName}: import() with a computed specifier`);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal))
      out.push(node.argument.literal.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out.filter((s) => s.startsWith('./') || s.startsWith('../'));
}

/** Every .ts/.tsx file under `dir` (absolute paths, sorted), but those under a path `skip` names. */
export function sourceFiles(dir: string, skip: (path: string) => boolean, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (skip(p)) continue;
    if (statSync(p).isDirectory()) sourceFiles(p, skip, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/**
 * The graph of every .ts/.tsx file under `dir` (but those `skip` names), with paths relative to `root`;
 * `computedOk`: files (relative to `root`) allowed a computed import() of something that is no source.
 */
export function importGraph(
  root: string,
  dir: string,
  skip: (path: string) => boolean = () => false,
  computedOk: ReadonlySet<string> = new Set(),
): Graph {
  const graph: Graph = new Map();
  const rel = (p: string) => relative(root, p).split('\\').join('/');
  for (const file of sourceFiles(dir, skip)) {
    const edges = new Set<string>();
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'), file, computedOk.has(rel(file)))) {
      // Stylesheets and images the bundler takes are not modules of the graph.
      if (/\.[a-z]+$/.test(spec) && !/\.(js|ts|tsx)$/.test(spec)) continue;
      const base = resolve(dirname(file), spec).replace(/\.(js|ts|tsx)$/, '');
      const target = ['.ts', '.tsx', '/index.ts'].map((ext) => base + ext).find(existsSync);
      if (!target) throw new Error(`${rel(file)}: cannot resolve ${spec}`);
      edges.add(rel(target));
    }
    graph.set(rel(file), edges);
  }
  return graph;
}

/** Every cycle, each once, as the files around it (first file repeated at the end). */
export function cycles(graph: Graph): string[][] {
  // Tarjan's strongly connected components; a component of more than one file (or a file importing
  // itself) holds a cycle, and one path around it is reported.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || graph.get(v)?.has(v)) found.push(pathAround(graph, new Set(component), v));
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return found;
}

/** A shortest path from `start` back to itself inside one component. */
function pathAround(graph: Graph, component: Set<string>, start: string): string[] {
  const from = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of [...(graph.get(v) ?? [])].sort()) {
      if (!component.has(w)) continue;
      if (w === start) {
        const path = [start];
        for (let u = v; u !== start; u = from.get(u)!) path.splice(1, 0, u);
        return [...path, start];
      }
      if (!from.has(w)) {
        from.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

/** Layers lowest first, each a list of files and folders (ending in '/'); a file belongs to the layer of its longest match. */
export type Layers = readonly (readonly string[])[];

export function layerOf(layers: Layers, file: string): number | undefined {
  let best: { layer: number; length: number } | undefined;
  layers.forEach((prefixes, layer) => {
    for (const p of prefixes)
      if ((file === p || (p.endsWith('/') && file.startsWith(p))) && p.length > (best?.length ?? -1)) best = { layer, length: p.length };
  });
  return best?.layer;
}

/** Files (importing or imported) in no layer, and imports from a lower layer to a higher one ("from -> to"). */
export function layerViolations(graph: Graph, layers: Layers): { unplaced: string[]; upward: string[] } {
  const files = new Set([...graph.keys(), ...[...graph.values()].flatMap((t) => [...t])]);
  const unplaced = [...files].filter((f) => layerOf(layers, f) === undefined).sort();
  const upward: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const a = layerOf(layers, from);
      const b = layerOf(layers, to);
      if (a !== undefined && b !== undefined && b > a) upward.push(`${from} -> ${to}`);
    }
  }
  return { unplaced, upward: upward.sort() };
}
