// Fastify's validator for every route: the shared TypeBox check of src/schemas/check.ts, with query
// strings and path params converted from text first ("5" -> 5, "true" -> true).
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { InvalidRequestError } from '../errors.js';
import { issuesOf } from '../schemas/check.js';

const PART: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const part = PART[httpPart ?? 'body'] ?? 'body';
  return (value: unknown) => {
    const v = part === 'body' ? value : Value.Convert(schema, value);
    const issues = issuesOf(schema, v, part);
    return issues ? { error: new InvalidRequestError(issues) } : { value: v };
  };
};
