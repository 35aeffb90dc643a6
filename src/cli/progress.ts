// A progress bar on stderr for long commands, only when stderr is a terminal (nothing in pipes, logs
// and tests). Updates are cheap to call often: cli-progress redraws at its own pace.
import { SingleBar, Presets } from 'cli-progress';

export interface Progress {
  /** Fraction done, 0..1. */
  update(fraction: number): void;
  stop(): void;
}

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar(
    { stream, format: `${label} [{bar}] {percentage}% | {duration_formatted}`, hideCursor: true, clearOnComplete: false },
    Presets.shades_classic,
  );
  bar.start(1000, 0);
  return {
    update: (f) => bar.update(Math.max(0, Math.min(1000, Math.round(f * 1000)))),
    stop: () => bar.stop(),
  };
}
