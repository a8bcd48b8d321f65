/**
 * Whether an error means the coordinator (Redis) could not be reached, as opposed to a fault of the request:
 * the former passes by itself (Redis restarts in seconds), so callers degrade or retry instead of failing hard.
 */
export class CoordinatorUnavailableError extends Error {
  override readonly name = 'CoordinatorUnavailableError';
  constructor(message = 'the coordinator (Redis) is unreachable', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** ioredis's words for a command that could not reach the server or got no answer in time. */
const CLIENT_GAVE_UP =
  /^(Connection is closed|Stream isn't writeable|Command timed out|Reached the max retries per request)/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

export function isCoordinatorUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  if (error instanceof CoordinatorUnavailableError) return true;
  const { name, code, message, cause } = error as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    cause?: unknown;
  };
  if (name === 'MaxRetriesPerRequestError') return true;
  if (typeof message === 'string' && CLIENT_GAVE_UP.test(message)) return true;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  return isCoordinatorUnavailable(cause, depth + 1);
}

/**
 * Runs `run`, and again every `stepMs` while it fails because the coordinator is unreachable, for up to
 * `waitMs`; then the last failure is thrown. For a step that a short Redis outage should delay, not fail.
 */
export async function whenCoordinatorAnswers<T>(
  run: () => Promise<T>,
  options: { waitMs: number; stepMs?: number },
): Promise<T> {
  const stepMs = options.stepMs ?? 250;
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    try {
      return await run();
    } catch (error) {
      if (!isCoordinatorUnavailable(error) || Date.now() + stepMs > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, stepMs));
    }
  }
}
