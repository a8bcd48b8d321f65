/**
 * The event side of an `SttStream`: producers (socket callbacks, finished transcriptions) put events, one
 * consumer reads them with `for await`. `close()` ends the iteration after the events already queued;
 * `discard()` ends it at once (abort). After either, `put` is ignored: no event ever follows the end.
 * A consumer leaving its loop early (`break`, `return`, a throw) calls `onLeave`, so the stream can stop its work.
 * Unbounded: an STT stream makes a few events per second of audio, and its consumer reads them as they come.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  readonly #events: T[] = [];
  #wake: (() => void) | undefined;
  #closed = false;
  #iterating = false;

  constructor(private readonly onLeave: () => void = () => {}) {}

  put(event: T): void {
    if (this.#closed) return;
    this.#events.push(event);
    this.#notify();
  }

  close(): void {
    this.#closed = true;
    this.#notify();
  }

  discard(): void {
    this.#events.length = 0;
    this.close();
  }

  get closed(): boolean {
    return this.#closed;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    if (this.#iterating) throw new Error('an STT stream has one consumer: iterate it once');
    this.#iterating = true;
    let finished = false;
    try {
      for (;;) {
        const event = this.#events.shift();
        if (event !== undefined) {
          yield event;
          continue;
        }
        if (this.#closed) {
          finished = true;
          return;
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      if (!finished) this.onLeave();
    }
  }
}
