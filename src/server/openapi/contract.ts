// The contract check: every answer the server gives is validated against the OpenAPI document's
// schema for its route, status and content type; an answer from a route the document leaves out (and
// surface.ts does not exclude) is a violation too. On in the test suite (TRACELAKE_CHECK_CONTRACT=1,
// set by test/run.mjs, or the `checkContract` option), off in production. A violation turns the answer
// into a 500 naming it (so the test that received it fails) and is listed on stderr when the process
// exits, which then exits non-zero (so a test that did not look at the status fails too).
// Validators are compiled once per route, status and content type, on first use.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ApiSurface } from './document.js';
import { isNotApi } from './surface.js';

// biome-ignore lint/suspicious/noExplicitAny: OpenAPI documents are walked as JSON of any shape
type Json = Record<string, any>;
type Check = ((data: unknown) => boolean) & { errors?: { instancePath: string; message?: string }[] | null };
// ajv-formats is CommonJS: under NodeNext its default import is the module, whose `default` is the
// plugin (the plugin function also carries itself as `default`, so this reads it either way).
const addFormats = addFormatsModule.default;

export const CONTRACT_ENV = 'TRACELAKE_CHECK_CONTRACT';

const violations: string[] = [];
let reported = false;

/** Violations seen so far in this process (and forgets them: a test that provokes one on purpose). */
export function takeViolations(): string[] {
  return violations.splice(0);
}

function report(): void {
  if (reported) return;
  reported = true;
  process.once('exit', () => {
    if (violations.length === 0) return;
    process.stderr.write(
      `\ntracelake: ${violations.length} answer(s) broke the OpenAPI contract:\n${[...new Set(violations)]
        .slice(0, 50)
        .map((v) => `  ${v}`)
        .join('\n')}\n`,
    );
    process.exitCode = 1;
  });
}

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

export function installContractCheck(app: FastifyInstance, surface: ApiSurface): void {
  report();
  let ajv: Ajv2020 | null = null;
  const checks = new Map<string, Check | string>();

  const checkerFor = (path: string, method: string, status: number, media: string): Check | string => {
    const key = `${method} ${path} ${status} ${media}`;
    let c = checks.get(key);
    if (c !== undefined) return c;
    const doc = surface.document();
    if (!ajv) {
      ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: false, validateFormats: true });
      addFormats(ajv);
      ajv.addSchema(doc, 'openapi');
    }
    const op = doc['paths']?.[path]?.[method] as Json | undefined;
    let where = ['paths', path, method, 'responses', String(status)];
    let res = op?.['responses']?.[String(status)] as Json | undefined;
    if (res?.['$ref']) {
      where = String(res['$ref']).slice(2).split('/');
      res = where.reduce<Json | undefined>((o, k) => o?.[k], doc);
    }
    if (!op) c = `${method.toUpperCase()} ${path} is not in the document`;
    else if (!res) c = `${method.toUpperCase()} ${path} answered ${status}, a status the document does not list`;
    else if (!res['content']) c = () => true;
    else if (!res['content'][media])
      c = `${method.toUpperCase()} ${path} ${status} answered ${media || 'no content type'}, not one of ${Object.keys(res['content']).join(', ')}`;
    else if (!media.endsWith('json')) c = () => true;
    else c = ajv.compile({ $ref: `openapi#/${pointer(...where, 'content', media, 'schema')}` }) as Check;
    checks.set(key, c);
    return c;
  };

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const problem = judge(request, reply, payload);
    if (problem === null) return payload;
    violations.push(problem);
    reply.code(500).type('application/json');
    return JSON.stringify({ detail: `contract violation: ${problem}` });
  });

  function judge(request: FastifyRequest, reply: FastifyReply, payload: unknown): string | null {
    const url = request.routeOptions.url;
    const status = reply.statusCode;
    // Router-level answers (no route matched, a malformed URL) carry the common error body.
    // (A body refused before routing, e.g. empty JSON on an unknown path, gets the 422 list form.)
    if (url === undefined || request.is404)
      return typeof payload === 'string' && /^\{"detail":["[]/.test(payload)
        ? null
        : `${request.method} ${request.url} answered ${status} without {detail}`;
    if (isNotApi(url)) return null;
    const path = surface.documentedPath(request.method, url);
    if (path === null)
      return `${request.method} ${url} is served but left out of the document (hide it only under a NOT_API prefix in openapi/surface.ts)`;
    const method = request.method === 'HEAD' ? 'get' : request.method.toLowerCase();
    const media = String(reply.getHeader('content-type') ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    const check = checkerFor(path, method, status, media);
    if (typeof check === 'string') return check;
    if (request.method === 'HEAD' || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) return null;
    if (!media.endsWith('json')) return check(payload) ? null : `${method.toUpperCase()} ${path} ${status}: body does not match`;
    let data: unknown;
    try {
      data = JSON.parse(String(payload));
    } catch {
      return `${method.toUpperCase()} ${path} ${status}: the body is not JSON`;
    }
    if (check(data)) return null;
    const e = check.errors?.[0];
    return (
      `${method.toUpperCase()} ${path} ${status}: ` +
      `${e ? `${e.instancePath || '(root)'} ${e.message ?? ''}` : 'does not match'} (${String(payload).slice(0, 200)})`
    );
  }
}
