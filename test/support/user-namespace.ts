// Root's powers for a child command, for the tests that mount a file system or start a pid namespace:
// as root, `unshare` with the namespaces asked for; as another user, the same inside a new user
// namespace (`unshare -r`: root there, the calling user outside), where the kernel allows those.
// Mounts made this way live and die with the child's mount namespace.
import { spawnSync } from 'node:child_process';

export const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/**
 * The prefix that runs a command under `unshare <flags>` (e.g. ['-m'] for a mount namespace,
 * ['-pf', '--mount-proc'] for pid 1), as root or in a user namespace; `why` when neither works here.
 */
export function unshareAsRoot(flags: readonly string[]): { prefix: string[] } | { why: string } {
  const prefix = isRoot() ? ['unshare', ...flags] : ['unshare', '-r', ...flags];
  const probe = spawnSync(prefix[0]!, [...prefix.slice(1), 'true'], { encoding: 'utf8' });
  if (probe.status === 0) return { prefix };
  return {
    why: `${prefix.join(' ')} is not permitted here (needs root or user namespaces): ${(probe.stderr || probe.error?.message || '').trim()}`,
  };
}
