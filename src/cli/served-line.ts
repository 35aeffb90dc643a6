// The line `tracelake serve` prints once it listens, and its reading: tests, benchmarks and scripts
// that start a server learn its address (port 0 picks a free one) from this line alone.

/** The line printed once the server listens at `address`. */
export function servedLine(version: string, dir: string, address: string): string {
  return `tracelake ${version} serving ${dir} at ${address}\n`;
}

/** The address in a server's output so far (its served line), or null before the line is complete. */
export function servedUrl(out: string): string | null {
  return / at (http:\/\/\S+)\n/.exec(out)?.[1] ?? null;
}
