import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

/** The calls a gateway node runs, as shutdown sees them (`CallStreams`). */
export interface DrainableCalls {
  readonly live: number;
  idle(): Promise<void>;
  endAll(): Promise<number>;
}

/**
 * The drain of a node that was told to stop (after it stopped taking new calls): live calls run on until they
 * end by their own rules, for at most `windowMs`, or until `endNow` resolves (a second signal); the calls left
 * then are ended `failed` with `node-shutdown`. Each ended call gets its own log line from the lifecycle.
 */
export async function drainLiveCalls(
  calls: DrainableCalls,
  options: { windowMs: number; endNow?: Promise<void>; logger: Logger },
): Promise<void> {
  const { windowMs, logger } = options;
  if (calls.live > 0) {
    logger.warn(
      { live_calls: calls.live, drain_ms: windowMs },
      `shutting down: live calls may finish for up to ${windowMs / 1000} s (signal again to end them now)`,
    );
    const window = new AbortController();
    await Promise.race([
      calls.idle(),
      sleep(windowMs, undefined, { signal: window.signal }).catch(() => {}),
      ...(options.endNow ? [options.endNow] : []),
    ]);
    window.abort();
  }
  const ended = await calls.endAll();
  if (ended > 0) logger.warn({ calls: ended }, 'ended the calls still live at shutdown (node-shutdown)');
}
