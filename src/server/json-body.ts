// The JSON body parser of every route. Fastify's default one scans the whole text with two regular
// expressions for keys that poison prototypes before it walks the parsed value; here the parsed value
// is walked once instead, and that walk also measures its nesting for the schema check. Answers are
// Fastify's: an empty body and invalid JSON (poisoning keys included) fail with its error codes.
import { errorCodes, type FastifyInstance } from 'fastify';
import { poisonsPrototypes } from '../schemas/check.js';

export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = body as string;
    if (text.length === 0) {
      done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      return;
    }
    let value: unknown;
    try {
      // A byte order mark is not JSON; the default parser drops it too.
      value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    } catch {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    if (poisonsPrototypes(value)) {
      done(new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY(), undefined);
      return;
    }
    done(null, value);
  });
}
