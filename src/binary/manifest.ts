// What the single binary's blob holds, shared by the build (scripts/binary) and the binary's start-up:
// one SEA asset per file plus this manifest, stored under MANIFEST_KEY.
export const MANIFEST_KEY = 'tracelake/manifest.json';

/** Where the DuckDB addon and its library go inside the unpacked folder (side by side: RUNPATH $ORIGIN). */
export const NATIVE_DIR = 'native';
export const DUCKDB_ADDON = `${NATIVE_DIR}/duckdb.node`;
export const DUCKDB_LIBRARY = `${NATIVE_DIR}/libduckdb.so`;

export interface ManifestFile {
  /** SEA asset key. */
  key: string;
  /** Relative path in the unpacked folder, forward slashes (the package layout for runtime files). */
  path: string;
  /** Size once unpacked, checked whenever an existing folder is reused. */
  size: number;
  gzip: boolean;
  executable: boolean;
}

export interface Manifest {
  version: string;
  /** sha256 over every file's path and content: names the cache folder. */
  hash: string;
  files: ManifestFile[];
}

/** The cache folder's name for a manifest: readable version plus the content hash. */
export function folderName(m: Manifest): string {
  return `tracelake-${m.version}-${m.hash.slice(0, 16)}`;
}
