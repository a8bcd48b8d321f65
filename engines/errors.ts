/** An engine failure with what a caller needs to decide: retry or not, and the provider's status if any. */
export class EngineError extends Error {
  readonly isEngineError = true;
  constructor(
    message: string,
    readonly options: { engine: string; retryable: boolean; status?: number; cause?: unknown },
  ) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'EngineError';
  }
  get retryable(): boolean {
    return this.options.retryable;
  }
}

export function isEngineError(value: unknown): value is EngineError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { isEngineError?: unknown }).isEngineError === true
  );
}
