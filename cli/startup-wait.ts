import type { Logger } from 'pino';
import { isCoordinatorUnavailable } from '../core/coord/unavailable.ts';
import { isStoreUnavailable } from '../core/store/unavailable.ts';

/** Whether a start step failed because PostgreSQL or Redis did not answer, which passes by itself. */
export function isServiceUnavailable(error: unknown): boolean {
  return isStoreUnavailable(error) || isCoordinatorUnavailable(error);
}

export interface StartupWaitOptions {
  /** How long the whole start may wait for its services, over every step; 0 gives up at the first refusal. */
  waitMs: number;
  logger: Logger;
  /** The first pause between tries; it doubles up to 2 s. */
  firstPauseMs?: number;
}

/**
 * A node that starts while PostgreSQL or Redis is away for seconds (a supervisor restarting it in the middle of
 * an outage) waits for them instead of exiting: each step of the start that touches them runs again, after its
 * half-started parts were undone, until it goes through or the start's wait runs out. Any other failure (a port
 * in use, a bad setting) ends the start at once.
 */
export class StartupWait {
  private readonly deadline: number;
  private readonly firstPauseMs: number;

  constructor(private readonly options: StartupWaitOptions) {
    this.deadline = Date.now() + options.waitMs;
    this.firstPauseMs = options.firstPauseMs ?? 250;
  }

  /**
   * Runs `run`; while it fails for want of PostgreSQL or Redis, `undo` (what the failed try left running), a
   * pause, and again. Logs the first refusal and, once through, how long the step waited.
   */
  async step<T>(name: string, run: () => Promise<T>, undo?: () => Promise<void>): Promise<T> {
    const startedAt = Date.now();
    let pauseMs = this.firstPauseMs;
    let refusals = 0;
    for (;;) {
      try {
        const result = await run();
        if (refusals > 0)
          this.options.logger.warn(
            { step: name, waited_ms: Date.now() - startedAt, tries: refusals + 1 },
            'PostgreSQL and Redis answer: the start goes on',
          );
        return result;
      } catch (error) {
        await undo?.();
        if (!isServiceUnavailable(error) || Date.now() + pauseMs > this.deadline) throw error;
        if (refusals === 0)
          this.options.logger.warn(
            { step: name, err: error, wait_ms: this.deadline - Date.now() },
            'PostgreSQL or Redis does not answer: waiting for it before starting',
          );
        refusals++;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, 2_000);
      }
    }
  }
}
