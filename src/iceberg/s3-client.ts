// The few S3 calls publishing needs (list, get, put, delete), signed with AWS Signature V4 by the
// small `aws4fetch` package over Node's fetch. Path-style addresses with an endpoint (S3-compatible
// servers), virtual-hosted ones on AWS. Credentials come from the standard environment variables.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { AwsClient } from 'aws4fetch';
import { invalid, StorageError } from '../errors.js';

export interface S3Options {
  /** An S3-compatible server's URL (path-style addressing), e.g. http://127.0.0.1:4568. Default: AWS. */
  readonly endpoint?: string;
  readonly region?: string;
  readonly accessKeyId?: string;
  readonly secretAccessKey?: string;
  readonly sessionToken?: string;
}

/** Attempts of a request that failed with a network error or a 5xx/429 answer. */
const ATTEMPTS = 4;

export class S3Client {
  readonly #aws: AwsClient;
  readonly #base: string;

  constructor(
    readonly bucket: string,
    options: S3Options = {},
    env: NodeJS.ProcessEnv = process.env,
  ) {
    const accessKeyId = options.accessKeyId ?? env['AWS_ACCESS_KEY_ID'];
    const secretAccessKey = options.secretAccessKey ?? env['AWS_SECRET_ACCESS_KEY'];
    if (!accessKeyId || !secretAccessKey)
      throw invalid(
        ['s3'],
        'S3 needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)',
      );
    const region = options.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'] ?? 'us-east-1';
    const sessionToken = options.sessionToken ?? env['AWS_SESSION_TOKEN'];
    // Retries are ours: a streamed body cannot be sent twice.
    this.#aws = new AwsClient({
      accessKeyId,
      secretAccessKey,
      ...(sessionToken ? { sessionToken } : {}),
      service: 's3',
      region,
      retries: 0,
    });
    if (options.endpoint) {
      let url: URL;
      try {
        url = new URL(options.endpoint);
      } catch {
        throw invalid(['s3', 'endpoint'], 'Input should be a URL such as http://127.0.0.1:9000', options.endpoint);
      }
      this.#base = `${url.origin}${url.pathname.replace(/\/$/, '')}/${encodeURIComponent(bucket)}`;
    } else {
      this.#base = `https://${bucket}.s3.${region}.amazonaws.com`;
    }
  }

  #url(key: string, query = ''): string {
    return `${this.#base}/${key.split('/').map(encodeURIComponent).join('/')}${query}`;
  }

  async #send(
    what: string,
    make: () => Promise<Response>,
    ok: (status: number) => boolean = (s) => s >= 200 && s < 300,
  ): Promise<Response> {
    let last: unknown;
    for (let i = 0; i < ATTEMPTS; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100 * 2 ** i));
      try {
        const res = await make();
        if (ok(res.status)) return res;
        const body = await res.text().catch(() => '');
        last = new StorageError(`S3 ${what}: HTTP ${res.status} ${/<Code>([^<]*)<\/Code>/.exec(body)?.[1] ?? ''}`.trim());
        if (res.status < 500 && res.status !== 429) break;
      } catch (err) {
        last = err;
      }
    }
    throw last instanceof StorageError ? last : new StorageError(`S3 ${what} failed: ${(last as Error).message}`, { cause: last });
  }

  /** Keys under a prefix with their sizes (every page of ListObjectsV2). */
  async list(prefix: string): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    let token: string | undefined;
    do {
      const q = new URLSearchParams({ 'list-type': '2', prefix, ...(token ? { 'continuation-token': token } : {}) });
      const base = this.#base.endsWith('amazonaws.com') ? `${this.#base}/` : `${this.#base}`;
      const res = await this.#send(`list ${prefix}`, () => this.#aws.fetch(`${base}?${q.toString()}`));
      const xml = await res.text();
      for (const m of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
        const key = xmlText(/<Key>([\s\S]*?)<\/Key>/.exec(m[1]!)?.[1] ?? '');
        out.set(key, Number(/<Size>(\d+)<\/Size>/.exec(m[1]!)?.[1] ?? 0));
      }
      token = /<IsTruncated>true<\/IsTruncated>/.test(xml)
        ? xmlText(/<NextContinuationToken>([\s\S]*?)<\/NextContinuationToken>/.exec(xml)?.[1] ?? '')
        : undefined;
    } while (token);
    return out;
  }

  async get(key: string): Promise<Buffer | null> {
    const res = await this.#send(
      `get ${key}`,
      () => this.#aws.fetch(this.#url(key)),
      (s) => (s >= 200 && s < 300) || s === 404,
    );
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    return Buffer.from(await res.arrayBuffer());
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    const res = await this.#send(`put ${key}`, () => this.#aws.fetch(this.#url(key), { method: 'PUT', body: bytes }));
    await res.body?.cancel();
  }

  /** Uploads a file as one PUT, streamed (S3 takes up to 5 GiB this way); the body is not hashed. */
  async putFile(key: string, path: string, size: number): Promise<void> {
    const res = await this.#send(`put ${key}`, () =>
      this.#aws.fetch(this.#url(key), {
        method: 'PUT',
        body: Readable.toWeb(createReadStream(path)) as ReadableStream,
        headers: { 'Content-Length': String(size), 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' },
        duplex: 'half',
      } as RequestInit),
    );
    await res.body?.cancel();
  }

  async delete(key: string): Promise<void> {
    const res = await this.#send(
      `delete ${key}`,
      () => this.#aws.fetch(this.#url(key), { method: 'DELETE' }),
      (s) => (s >= 200 && s < 300) || s === 404,
    );
    await res.body?.cancel();
  }
}

function xmlText(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}
