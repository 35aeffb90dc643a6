// Fastify's validator for every route: the shared TypeBox check of src/schemas/check.ts, with query
// strings and path params converted from text first ("5" -> 5, "true" -> true).
import type { FastifySchemaCompiler } from 'fastify';
import { type TSchema, Value } from '../vendor/typebox.js';
import { InvalidRequestError } from '../errors.js';
import { issuesOf, markChecked } from '../schemas/check.js';

const PART: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const part = PART[httpPart ?? 'body'] ?? 'body';
  // A body declared binary (`{type: 'string', format: 'binary'}`, e.g. OTLP protobuf) arrives as a Buffer.
  const binary = part === 'body' && (schema as { format?: string }).format === 'binary';
  return (value: unknown) => {
    if (binary)
      return Buffer.isBuffer(value)
        ? { value }
        : { error: new InvalidRequestError([{ loc: ['body'], msg: 'Input should be a binary body', type: 'bytes_type' }]) };
    const v = part === 'body' ? value : strictConvert(schema, value);
    const issues = issuesOf(schema, v, part);
    if (issues) return { error: new InvalidRequestError(issues) };
    // The body goes to a library method that would check it again against the same schema.
    if (part === 'body') markChecked(schema, v);
    return { value: v };
  };
};

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * TypeBox's conversion, except that text only becomes a number when it is one: Convert alone turns
 * "" into 0 and "true" into 1, so `?starting_token=true` read as 1 where the document says integer.
 */
function strictConvert(schema: TSchema, value: unknown): unknown {
  // Convert may change the object in place: the texts are taken first.
  const before = value && typeof value === 'object' ? Object.entries(value as Record<string, unknown>) : [];
  const out = Value.Convert(schema, value);
  if (!out || typeof out !== 'object') return out;
  for (const [k, raw] of before) {
    const now = (out as Record<string, unknown>)[k];
    if (typeof raw === 'string' && typeof now === 'number' && !NUMBER.test(raw.trim())) (out as Record<string, unknown>)[k] = raw;
  }
  return out;
}
