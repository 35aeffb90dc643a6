// Publishing on a timer (`tracelake serve --iceberg-every SECONDS`): one publish at a time, the next
// starting the interval after the last one ended; a failure is reported and the next one retries
// (an interrupted publish leaves the previous snapshot readable, and the next completes it).
import type { Iceberg, PublishOptions, PublishResult } from './publish.js';

export interface Publishing {
  /** Stops the timer and waits for a publish under way. */
  stop(): Promise<void>;
}

export function publishEvery(
  iceberg: Iceberg,
  options: PublishOptions,
  everyMs: number,
  report: { done(r: PublishResult): void; failed(err: unknown): void },
): Publishing {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    running = iceberg
      .publish(options)
      .then(report.done, report.failed)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, everyMs);
      });
  };
  timer = setTimeout(tick, everyMs);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
