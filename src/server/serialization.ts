// Responses are written by fast-json-stringify from each route's response schema, as Fastify does by
// default, but each serializer is compiled on its route's first answer instead of at start: compiling
// every route's schemas for every prefix was most of a server's start (the first answer waited for
// serializers of routes it never called).
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import fastJsonStringify from 'fast-json-stringify';

export const lazySerializerCompiler: FastifySerializerCompiler<unknown> = ({ schema }) => {
  let compiled: ((data: unknown) => string) | undefined;
  return (data) => {
    compiled ??= fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]);
    return compiled(data);
  };
};
