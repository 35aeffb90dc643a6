// Reading the OpenAPI document in tests: the surface check (every route documented or excluded on
// purpose), operations and their schemas, and an Ajv validator over the whole document.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { isNotApi } from '../../src/server/openapi/surface.js';

export type Json = Record<string, any>;
export const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

export interface Operation {
  method: string;
  path: string;
  op: Json;
}

export function operations(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc['paths'] as Json))
    for (const m of METHODS) if (item[m]) out.push({ method: m, path, op: item[m] });
  return out;
}

/**
 * What is wrong with the surface: a route neither documented nor excluded (under NOT_API, or an alias
 * of a documented /v2 route), a documented route missing from the document, an operation without a
 * summary, tag or success schema. Empty when all is well.
 */
export function surfaceProblems(app: FastifyInstance): string[] {
  const surface = app.apiSurface;
  const doc = surface.document();
  const problems: string[] = [];
  const documented = new Set<string>();
  for (const r of surface.routes) {
    for (const method of [r.method].flat()) {
      if (method === 'HEAD') continue;
      const path = surface.documentedPath(method, r.url);
      if (path === null) {
        if (!isNotApi(r.url)) problems.push(`${method} ${r.url} is hidden from the document but not under a NOT_API prefix`);
        continue;
      }
      if (!doc['paths']?.[path]?.[method.toLowerCase()])
        problems.push(`${method} ${r.url} (documented as ${path}) is missing from the document`);
      documented.add(`${method.toLowerCase()} ${path}`);
    }
  }
  for (const { method, path, op } of operations(doc)) {
    if (!documented.has(`${method} ${path}`)) problems.push(`${method} ${path} is documented but no route serves it`);
    if (!op['summary']) problems.push(`${method} ${path} has no summary`);
    if (!op['tags']?.length) problems.push(`${method} ${path} has no tag`);
    const ok = Object.entries(op['responses'] ?? {}).filter(([s]) => s.startsWith('2'));
    if (ok.length === 0 || ok.some(([, r]) => !(r as Json)['content']?.['application/json']?.['schema'] && !(r as Json)['content']))
      problems.push(`${method} ${path} has no success answer with a schema`);
  }
  return problems;
}

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => void;

/** Validators for schemas inside the document, by JSON pointer. */
export function documentValidator(doc: Json): (pointer: string, value: unknown) => string | null {
  const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'doc');
  return (pointer, value) => {
    const check = ajv.compile({ $ref: `doc#${pointer}` });
    return check(value) ? null : ajv.errorsText(check.errors);
  };
}

export const pointer = (...parts: string[]) => `/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
