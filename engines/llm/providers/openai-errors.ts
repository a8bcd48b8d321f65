/** Failures of an OpenAI-compatible server as `EngineError`s: which ones a retry may cure, and how long to wait. */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { EngineError } from '../../errors.ts';

export const OPENAI_ENGINE = 'llm:openai';

/** Statuses a later attempt may cure: request timeout, rate limit, and every server-side failure. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * Classifies what the SDK or the stream threw. `timedOut` names our own timer when it was the one that aborted
 * the request (the SDK then reports a plain abort).
 */
export function chatFailure(error: unknown, timedOut: string | undefined): EngineError {
  if (timedOut !== undefined) {
    return new EngineError(`no ${timedOut} from the language model in time`, {
      engine: OPENAI_ENGINE,
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof EngineError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new EngineError('language model request timed out', {
      engine: OPENAI_ENGINE,
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIUserAbortError) {
    return new EngineError('language model request aborted', {
      engine: OPENAI_ENGINE,
      retryable: false,
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    return new EngineError(`cannot reach the language model: ${error.message}`, {
      engine: OPENAI_ENGINE,
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIError) {
    // No status: an `{"error": ...}` event inside a 200 stream, which servers send when generation fails.
    const status = error.status;
    const retryable = status === undefined || isRetryableStatus(status);
    const options = { engine: OPENAI_ENGINE, retryable, cause: error };
    return new EngineError(
      `language model answered ${status ?? 'an error event'}: ${error.message}`,
      status === undefined ? options : { ...options, status },
    );
  }
  if (error instanceof SyntaxError) {
    return new EngineError(`malformed stream from the language model: ${error.message}`, {
      engine: OPENAI_ENGINE,
      retryable: false,
      cause: error,
    });
  }
  // Node's fetch reports a connection reset while reading the body as a TypeError ("terminated").
  if (error instanceof TypeError) {
    return new EngineError(`language model connection failed: ${error.message}`, {
      engine: OPENAI_ENGINE,
      retryable: true,
      cause: error,
    });
  }
  return new EngineError(`language model failed: ${String(error)}`, {
    engine: OPENAI_ENGINE,
    retryable: false,
    cause: error,
  });
}

/** After output reached the caller the same failure is final: a retry would speak the reply a second time. */
export function afterOutput(failure: EngineError): EngineError {
  if (!failure.retryable) return failure;
  const options = { engine: failure.options.engine, retryable: false, cause: failure };
  return new EngineError(
    `${failure.message} (after the reply had started)`,
    failure.options.status === undefined ? options : { ...options, status: failure.options.status },
  );
}

/** The server's own wait, from `retry-after-ms` or `retry-after` (seconds), when it sent one. */
export function serverRetryDelayMs(error: unknown): number | undefined {
  const cause = error instanceof EngineError ? error.cause : error;
  if (!(cause instanceof APIError) || cause.headers === undefined) return undefined;
  const ms = Number(cause.headers.get('retry-after-ms'));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const seconds = Number(cause.headers.get('retry-after'));
  if (Number.isFinite(seconds) && seconds > 0) return seconds * 1000;
  return undefined;
}
