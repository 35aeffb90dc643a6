// The viewer's only data source: the v2 API of the server that served it, with a bearer token from
// /login/api_key or /login. The token lives in localStorage (same origin only); a 401 signs out.

const TOKEN = 'tracelake.token';
const SIGNED_OUT = 'tracelake:signed-out';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function token(): string | null {
  try {
    return localStorage.getItem(TOKEN);
  } catch {
    return null;
  }
}

export function signOut(): void {
  localStorage.removeItem(TOKEN);
  window.dispatchEvent(new Event(SIGNED_OUT));
}

export function onSignedOut(fn: () => void): () => void {
  window.addEventListener(SIGNED_OUT, fn);
  return () => window.removeEventListener(SIGNED_OUT, fn);
}

/** The error body's message: `detail` as a string, or the first validation issue with its field path. */
async function errorMessage(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { detail?: unknown };
    const d = body.detail;
    if (typeof d === 'string') return d;
    if (Array.isArray(d) && d[0]) {
      const first = d[0] as { msg?: string; loc?: unknown[] };
      return `${first.msg ?? 'invalid request'}${first.loc ? ` (at ${first.loc.join('.')})` : ''}`;
    }
  } catch {
    // not JSON
  }
  return `${res.status} ${res.statusText}`;
}

export async function api<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const t = token();
  const headers: Record<string, string> = {};
  if (t) headers['authorization'] = `Bearer ${t}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`/v2${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    ...(signal ? { signal } : {}),
  });
  if (res.status === 401) {
    signOut();
    throw new ApiError(401, 'Signed out: sign in again');
  }
  if (!res.ok) throw new ApiError(res.status, await errorMessage(res));
  return (await res.json()) as T;
}

async function login(path: string, init: RequestInit): Promise<void> {
  const res = await fetch(`/v2${path}`, { method: 'POST', ...init });
  if (!res.ok) throw new ApiError(res.status, res.status === 401 ? 'That key or password was not accepted' : await errorMessage(res));
  const body = (await res.json()) as { access_token: string };
  localStorage.setItem(TOKEN, body.access_token);
}

export function loginWithApiKey(apiKey: string): Promise<void> {
  return login('/login/api_key', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ api_key: apiKey.trim() }) });
}

export function loginWithPassword(email: string, password: string): Promise<void> {
  return login('/login', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username: email.trim(), password }).toString(),
  });
}

/** A run's field in request bodies. */
export function runField(kind: 'ls' | 'exp', runId: string): Record<string, string> {
  return kind === 'ls' ? { log_stream_id: runId } : { experiment_id: runId };
}

export const idFilter = (column: string, value: string) => ({ type: 'id', column_id: column, operator: 'eq', value });
