// An S3 bucket and prefix as Iceberg target. Data files are uploaded once: a key already in the
// bucket with the file's size is never sent again (segments never change under one name).
import { statSync } from 'node:fs';
import { S3Client, type S3Options } from './s3-client.js';
import type { PutFileResult, Target } from './target.js';

export class S3Target implements Target {
  readonly root: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  /** Keys known to be in the bucket with their sizes (filled by list). */
  readonly #known = new Map<string, number>();

  constructor(uri: string, options: S3Options = {}) {
    const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
    if (!m) throw new Error(`not an s3:// URI: ${uri}`);
    this.root = uri;
    this.#bucket = m[1]!;
    this.#prefix = m[2]!.replace(/\/+$/, '');
    this.#client = new S3Client(this.#bucket, options);
  }

  #key(rel: string): string {
    return this.#prefix === '' ? rel : `${this.#prefix}/${rel}`;
  }

  uri(rel: string): string {
    return `s3://${this.#bucket}/${this.#key(rel)}`;
  }

  async list(relDir: string): Promise<Map<string, number>> {
    const keys = await this.#client.list(`${this.#key(relDir).replace(/\/+$/, '')}/`);
    const cut = this.#prefix === '' ? 0 : this.#prefix.length + 1;
    const out = new Map<string, number>();
    for (const [k, n] of keys) {
      out.set(k.slice(cut), n);
      this.#known.set(k, n);
    }
    return out;
  }

  get(rel: string): Promise<Buffer | null> {
    return this.#client.get(this.#key(rel));
  }

  async put(rel: string, bytes: Uint8Array): Promise<void> {
    await this.#client.put(this.#key(rel), bytes);
    this.#known.set(this.#key(rel), bytes.byteLength);
  }

  async putFile(rel: string, source: string, size: number): Promise<PutFileResult> {
    const key = this.#key(rel);
    if (this.#known.get(key) === size) return { sent: 0 };
    await this.#client.putFile(key, source, statSync(source).size);
    this.#known.set(key, size);
    return { sent: size };
  }

  async remove(rels: readonly string[]): Promise<void> {
    for (const rel of rels) {
      await this.#client.delete(this.#key(rel));
      this.#known.delete(this.#key(rel));
    }
  }
}
