// The JSON body parser of every route. Fastify's default one scans the whole text with two regular
// expressions for keys that poison prototypes before it walks the parsed value; here the parsed value
// is walked once instead, and that walk also measures its nesting for the schema check. Answers are
// Fastify's: an empty body and invalid JSON (poisoning keys included) fail with its error codes. The
// bytes become text in body-text.ts.
import { errorCodes, type FastifyInstance } from 'fastify';
import { poisonsPrototypes } from '../schemas/check.js';
import { bodyText } from './body-text.js';

export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) {
      done(new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY(), undefined);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(bodyText(bytes));
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
