/**
 * Whether an error means the database could not be reached (refused, dropped, shutting down), as opposed to a
 * fault of the query or the code: the former passes by itself and is worth a retry, the latter is not.
 */

/** Node's socket errors on connecting to or talking with the server. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** PostgreSQL SQLSTATEs of a server going away: admin/crash shutdown, cannot connect now. */
const SHUTDOWN_STATES = new Set(['57P01', '57P02', '57P03']);

/**
 * node-postgres's words for a connection that broke under a query, timed out while connecting, or broke earlier
 * and is asked again (a transaction's next query after the server went away).
 */
const BROKEN_CONNECTION =
  /^Connection terminated|^timeout exceeded when trying to connect|^Client (has encountered a connection error|was closed) and is not queryable/;

export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    // SQLSTATE class 08: connection exception.
    if (NETWORK_CODES.has(code) || SHUTDOWN_STATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (typeof message === 'string' && BROKEN_CONNECTION.test(message)) return true;
  if (Array.isArray(errors) && errors.some((inner) => isStoreUnavailable(inner, depth + 1))) return true;
  return isStoreUnavailable(cause, depth + 1);
}

/**
 * Runs `run`, and again while it fails because the database is unreachable: after 100 ms, doubling to at most
 * 2 s between tries, for up to `giveUpAfterMs`; then (or on any other error) the failure is thrown. For writes
 * that must not be lost to an outage of seconds: settling a call that ended, recording a webhook attempt.
 * `run` must be safe to repeat (one transaction, or idempotent). `onRetry` hears the first failure only.
 */
export async function retryWhileStoreUnavailable<T>(
  run: () => Promise<T>,
  options: { giveUpAfterMs: number; onRetry?: (error: unknown) => void },
): Promise<T> {
  const deadline = Date.now() + options.giveUpAfterMs;
  let waitMs = 100;
  for (let attempt = 0; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!isStoreUnavailable(error) || Date.now() + waitMs > deadline) throw error;
      if (attempt === 0) options.onRetry?.(error);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      waitMs = Math.min(waitMs * 2, 2_000);
    }
  }
}
