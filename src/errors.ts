// One error family with stable codes. The server maps `statusCode` straight to HTTP; the library
// surfaces the same classes, so a script and a client see the same failure.

export interface ValidationIssue {
  /** JSON path of the offending field, starting with "body", "query" or "path". */
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

export class TraceLakeError extends Error {
  readonly code: string;
  readonly statusCode: number;
  constructor(code: string, statusCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.statusCode = statusCode;
  }
}

/** A request that is well-formed JSON but asks for something invalid (422 with a list of issues). */
export class InvalidRequestError extends TraceLakeError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[] | string, loc: (string | number)[] = ['body']) {
    const list = typeof issues === 'string' ? [{ loc, msg: issues, type: 'value_error' }] : issues;
    super('INVALID_REQUEST', 422, list.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
    this.issues = list;
  }
}

/** A body that cannot be decoded at all (an OTLP export that is neither valid protobuf nor JSON). */
export class BadRequestError extends TraceLakeError {
  constructor(message: string) {
    super('BAD_REQUEST', 400, message);
  }
}

/** The writer has more queued than it accepts: retry after `retryAfterSeconds` (429/503 with Retry-After). */
export class OverloadedError extends TraceLakeError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds = 1) {
    super('OVERLOADED', 503, message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class NotFoundError extends TraceLakeError {
  constructor(message: string) {
    super('NOT_FOUND', 404, message);
  }
}

export class UnauthorizedError extends TraceLakeError {
  constructor(message = 'Invalid or missing credentials') {
    super('UNAUTHORIZED', 401, message);
  }
}

export class ForbiddenError extends TraceLakeError {
  constructor(message = 'Not allowed') {
    super('FORBIDDEN', 403, message);
  }
}

/** The store is locked by another process, closed, or the resource already exists. */
export class ConflictError extends TraceLakeError {
  constructor(code: 'STORE_LOCKED' | 'STORE_CLOSED' | 'ALREADY_EXISTS', message: string) {
    super(code, 409, message);
  }
}

/**
 * A write through a store opened with `readOnly: true`: such a store reads beside the process that
 * writes the folder (the server, say) and never changes it; writes go through that process.
 */
export class ReadOnlyError extends TraceLakeError {
  constructor(what: string) {
    super(
      'STORE_READ_ONLY',
      409,
      `${what} needs the writer of this folder, and this store was opened read-only (readOnly: true) to read beside it; ` +
        "log through the process that holds the folder (e.g. the server's HTTP API), or open the folder without readOnly once no other process has it",
    );
  }
}

export class PayloadTooLargeError extends TraceLakeError {
  constructor(message: string) {
    super('PAYLOAD_TOO_LARGE', 413, message);
  }
}

/** Disk or database failure. The cause goes to the log, never to a client. */
export class StorageError extends TraceLakeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORAGE_FAILURE', 500, message, options);
  }
}

export function invalid(loc: (string | number)[], msg: string, input?: unknown, type = 'value_error'): InvalidRequestError {
  const issue: ValidationIssue = { loc, msg, type };
  if (input !== undefined) issue.input = input;
  return new InvalidRequestError([issue]);
}

/** One issue per field of a rule several fields share ("one of a, b or c"), so each of them is named. */
export function invalidFields(
  base: (string | number)[],
  fields: readonly string[],
  msg: string,
  type = 'value_error',
): InvalidRequestError {
  return new InvalidRequestError(fields.map((f) => ({ loc: [...base, f], msg, type })));
}
