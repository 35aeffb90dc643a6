// Where Iceberg tables are written: a local folder or an S3 bucket and prefix. Paths given to a
// target are relative to its root (`spans/metadata/v3.metadata.json`); `uri` turns one into the
// absolute location the metadata names.

export interface PutFileResult {
  /** Bytes sent or copied (0 when the file was already there, or hard-linked). */
  readonly sent: number;
}

export interface Target {
  /** The root as given (a folder path or s3://bucket/prefix), for messages. */
  readonly root: string;
  /** The absolute location of a path under the root, as manifests and metadata name it. */
  uri(rel: string): string;
  /** Files under a folder of the root (relative to the root), with their sizes. */
  list(relDir: string): Promise<Map<string, number>>;
  get(rel: string): Promise<Buffer | null>;
  /** Writes small bytes (metadata); whole or not at all where the store allows it. */
  put(rel: string, bytes: Uint8Array): Promise<void>;
  /** Places a data file (one of the store's segments) at `rel`, unless `known` says it is there. */
  putFile(rel: string, source: string, size: number): Promise<PutFileResult>;
  remove(rels: readonly string[]): Promise<void>;
}
