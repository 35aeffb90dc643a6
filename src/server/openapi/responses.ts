// The error answers every operation may give, declared once under components.responses and referred
// to from each operation (errors.ts builds every one of them: `{detail: string}`, and 422's list of
// issues). Which statuses an operation lists follows from what it takes and who may call it.
import { ErrorBody, ValidationErrorBody } from '../../schemas/common.js';

const error = (description: string, example: string) => ({
  description,
  content: { 'application/json': { schema: ErrorBody, example: { detail: example } } },
});

export const ERROR_RESPONSES = {
  '400': error(
    'A malformed request: a Content-Length that does not match the body, a malformed URL.',
    'Content-Length does not match the body',
  ),
  '401': error(
    'Missing, unknown, revoked or expired credentials (or a wrong password at login).',
    'Not authenticated: send an API key in the Galileo-API-Key header, or a bearer token',
  ),
  '403': error(
    'The caller’s role does not allow this (the reason is given); presets cannot be changed.',
    'log_data is not allowed: your role in this project is viewer',
  ),
  '404': error('The resource does not exist, or the caller has no role in its project.', 'Project 3f0c… not found'),
  '409': error('A name already taken, or the store is closing.', 'A project named my-app already exists'),
  '413': error(
    'The body is larger than the server accepts (--body-limit), or holds more spans than one request may.',
    'Request body is larger than the server accepts (see --body-limit)',
  ),
  '415': error(
    'The body is not JSON (the login form also takes application/x-www-form-urlencoded).',
    'Unsupported content type: send application/json',
  ),
  '422': {
    description: 'Validation failed: one issue per offending field, `loc` its path from body, query or path.',
    content: {
      'application/json': {
        schema: ValidationErrorBody,
        example: {
          detail: [
            {
              loc: ['body', 'filters', 0, 'operator'],
              msg: "Input should be one of 'eq', 'ne', 'contains', 'one_of', 'not_in' for a text filter",
              type: 'enum',
              input: 'like',
            },
          ],
        },
      },
    },
  },
  '429': {
    ...error(
      'Too many requests for this API key (only when rate limiting is on); wait as Retry-After says.',
      'Rate limit exceeded: retry in 12 seconds',
    ),
    headers: { 'Retry-After': { description: 'Seconds to wait before the next request.', schema: { type: 'integer' } } },
  },
  '500': error('A storage failure on the server (its cause goes to the server log, never to the client).', 'Internal Server Error'),
} as const;

export type ErrorStatus = keyof typeof ERROR_RESPONSES;

export interface OperationTraits {
  method: string;
  /** Needs credentials (everything but health, login and the document). */
  authenticated: boolean;
  hasBody: boolean;
  hasParams: boolean;
  hasQuery: boolean;
}

/** The error statuses an operation can answer. */
export function errorStatuses(t: OperationTraits): ErrorStatus[] {
  const out: ErrorStatus[] = [];
  // A body sent to any of these methods is parsed (and refused by size, type or JSON syntax), schema or not.
  const parsesBody = t.hasBody || ['POST', 'PUT', 'PATCH', 'DELETE'].includes(t.method);
  const takesInput = parsesBody || t.hasParams || t.hasQuery;
  if (parsesBody) out.push('400');
  if (t.authenticated || t.hasBody) out.push('401');
  if (t.authenticated) out.push('403');
  if (t.authenticated && (t.hasParams || t.hasBody)) out.push('404');
  if (t.authenticated && t.method !== 'GET') out.push('409');
  if (parsesBody) out.push('413', '415');
  if (takesInput) out.push('422');
  out.push('429', '500');
  return out;
}
