/**
 * A one-consumer async queue: a producer pushes values from callbacks (worker messages, socket reads), the
 * consumer pulls them with `for await`. Closing ends the iteration after the values already queued; failing ends
 * it with an error after them. Unbounded: producers here make a bounded amount (one sentence of audio).
 */
export class Channel<T> implements AsyncIterable<T> {
  readonly #values: T[] = [];
  #waiter: (() => void) | undefined;
  #closed = false;
  #error: unknown;
  #failed = false;

  push(value: T): void {
    if (this.#closed) return;
    this.#values.push(value);
    this.#wake();
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  fail(error: unknown): void {
    if (this.#closed) return;
    this.#error = error;
    this.#failed = true;
    this.close();
  }

  /** Drops queued values and ends the iteration at once (the consumer stopped caring). */
  discard(): void {
    this.#values.length = 0;
    this.#failed = false;
    this.close();
  }

  get closed(): boolean {
    return this.#closed;
  }

  #wake(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.#values.length > 0) {
        yield this.#values.shift()!;
        continue;
      }
      if (this.#closed) {
        if (this.#failed) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.#waiter = resolve;
      });
    }
  }
}
