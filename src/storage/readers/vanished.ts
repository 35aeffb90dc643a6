// A read-only store's reads may meet a segment (or a side file) that the writer's merge or drop removed
// after the reader's snapshot was taken: such a read is run again on a newer snapshot.

/** Whether `err` (or an error it was caused by) says that a file under `dir` does not exist. */
export function isVanishedFile(err: unknown, dir: string): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const x = e as { code?: unknown; path?: unknown; message?: unknown; cause?: unknown };
    if (x.code === 'ENOENT' && typeof x.path === 'string' && x.path.startsWith(dir)) return true;
    const message = typeof x.message === 'string' ? x.message : '';
    if (message.includes(dir) && /No such file or directory|No files found that match the pattern|Cannot open file/i.test(message))
      return true;
    e = x.cause;
  }
  return false;
}
