import { setTimeout as wait } from 'node:timers/promises';

/** Waits `ms`, or less if `signal` aborts first. Resolves true when the full time passed, false on abort. */
export async function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  if (ms <= 0) return true;
  try {
    await wait(ms, undefined, signal === undefined ? undefined : { signal });
    return true;
  } catch (error) {
    if (signal?.aborted) return false;
    throw error;
  }
}
