// Is a folder on a filesystem mounted noexec? Shared libraries cannot be loaded from one ("failed to
// map segment from shared object"), so the binary checks its cache folder and says so plainly.
import { readFileSync, realpathSync } from 'node:fs';

/** The mount point holding `dir` when that mount is noexec, else undefined (also when unknown). */
export function noexecMountOf(dir: string, mountinfo = '/proc/self/mountinfo'): string | undefined {
  let text: string;
  let real: string;
  try {
    text = readFileSync(mountinfo, 'utf8');
    real = realpathSync(dir);
  } catch {
    return undefined;
  }
  let best: { point: string; noexec: boolean } | undefined;
  for (const line of text.split('\n')) {
    // id parent major:minor root mount-point mount-options ... (proc(5)); octal escapes in paths.
    const f = line.split(' ');
    if (f.length < 6) continue;
    const point = f[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    const inside = point === '/' || real === point || real.startsWith(`${point}/`);
    if (inside && (!best || point.length >= best.point.length)) best = { point, noexec: f[5]!.split(',').includes('noexec') };
  }
  return best?.noexec ? best.point : undefined;
}
