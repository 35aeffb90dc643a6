// Sends fuzz requests: through fetch for well-formed HTTP, or byte for byte over a socket for what fetch
// refuses to send (lying Content-Length, broken chunking, control characters in headers, unnormalised
// paths such as /projects/../x). Every request has a deadline: a request that gets no answer is a hang.
import { connect } from 'node:net';

export interface FuzzRequest {
  method: string;
  /** Path with query string. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Sent verbatim over a socket instead (a whole HTTP request). */
  raw?: Buffer;
  /** The raw request is cut short on purpose: no answer (the server closing the socket) is acceptable. */
  mayGetNoAnswer?: boolean;
}

export interface FuzzResponse {
  status: number;
  text: string;
  contentType: string;
  ms: number;
}

export class HangError extends Error {}

export async function send(base: URL, req: FuzzRequest, timeoutMs: number): Promise<FuzzResponse | null> {
  return req.raw ? sendRaw(base, req, timeoutMs) : sendFetch(base, req, timeoutMs);
}

async function sendFetch(base: URL, req: FuzzRequest, timeoutMs: number): Promise<FuzzResponse> {
  const started = performance.now();
  const signal = AbortSignal.timeout(timeoutMs);
  let res: Response;
  try {
    res = await fetch(new URL(req.path, base), {
      method: req.method,
      headers: req.headers,
      ...(req.body !== undefined ? { body: req.body } : {}),
      signal,
      redirect: 'manual',
    });
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') throw new HangError(`no answer within ${timeoutMs} ms`);
    throw err;
  }
  const text = await res.text();
  return { status: res.status, text, contentType: res.headers.get('content-type') ?? '', ms: performance.now() - started };
}

function sendRaw(base: URL, req: FuzzRequest, timeoutMs: number): Promise<FuzzResponse | null> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(base.port), base.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      if (req.mayGetNoAnswer && chunks.length === 0) resolve(null);
      else reject(new HangError(`no answer within ${timeoutMs} ms (raw)`));
    }, timeoutMs);
    socket.on('connect', () => {
      socket.write(req.raw!);
      if (req.mayGetNoAnswer) socket.end();
    });
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', () => {
      // A reset after the answer (or instead of one, for a cut request) is fine; judged on close.
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      if (all.length === 0) {
        if (req.mayGetNoAnswer) resolve(null);
        else reject(new Error('connection closed without an answer'));
        return;
      }
      resolve(parseRaw(all, performance.now() - started));
    });
  });
}

/** The first response in `buf`: status, content type and (de-chunked) body. */
export function parseRaw(buf: Buffer, ms: number): FuzzResponse {
  const headEnd = buf.indexOf('\r\n\r\n');
  const head = buf.subarray(0, headEnd < 0 ? buf.length : headEnd).toString('latin1');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  let body = headEnd < 0 ? Buffer.alloc(0) : buf.subarray(headEnd + 4);
  if (headers.get('transfer-encoding') === 'chunked') {
    const parts: Buffer[] = [];
    let off = 0;
    for (;;) {
      const nl = body.indexOf('\r\n', off);
      if (nl < 0) break;
      const size = parseInt(body.subarray(off, nl).toString('latin1'), 16);
      if (!size) break;
      parts.push(body.subarray(nl + 2, nl + 2 + size));
      off = nl + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers.has('content-length')) {
    body = body.subarray(0, Number(headers.get('content-length')));
  }
  return { status, text: body.toString('utf8'), contentType: headers.get('content-type') ?? '', ms };
}
