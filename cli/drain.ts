import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

/** Calls a node runs, as shutdown sees them (`CallStreams` on a gateway, the sandbox carrier on a worker). */
export interface DrainableCalls {
  readonly live: number;
  idle(): Promise<void>;
  /** Ends what is still live as `node-shutdown`; returns how many it ended. */
  endAll(): Promise<number>;
}

/**
 * The drain of a node that was told to stop (after it stopped taking new calls): live calls (on its gateway, and
 * the sandbox carrier's simulated callees on its worker) run on until they end by their own rules, for at most
 * `windowMs`, or until `endNow` resolves (a second signal); the calls left then are ended `failed` with
 * `node-shutdown`. Each ended call gets its own log line from the lifecycle.
 */
export async function drainLiveCalls(
  named: Readonly<Record<string, DrainableCalls>>,
  options: { windowMs: number; endNow?: Promise<void>; logger: Logger },
): Promise<void> {
  const { windowMs, logger } = options;
  const parts = Object.values(named);
  if (parts.some((part) => part.live > 0)) {
    // One field per part (a call of a one-process node is both a gateway call and a sandbox callee).
    const counts = Object.fromEntries(Object.entries(named).map(([name, part]) => [name, part.live]));
    logger.warn(
      { ...counts, drain_ms: windowMs },
      `shutting down: live calls may finish for up to ${windowMs / 1000} s (signal again to end them now)`,
    );
    const window = new AbortController();
    await Promise.race([
      Promise.all(parts.map((part) => part.idle())),
      sleep(windowMs, undefined, { signal: window.signal }).catch(() => {}),
      ...(options.endNow ? [options.endNow] : []),
    ]);
    window.abort();
  }
  let ended = 0;
  for (const part of parts) ended += await part.endAll();
  if (ended > 0) logger.warn({ calls: ended }, 'ended the calls still live at shutdown (node-shutdown)');
}
