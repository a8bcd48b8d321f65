/**
 * The start of a reused buffer as a view, the last one kept: the hot paths that write into one buffer call after
 * call ask for the same length each time (a frame's worth), and a new view object per call costs about as much
 * as copying a short frame. The view is of the buffer's memory: valid until the buffer's next use.
 */
export class PrefixView<T extends { readonly length: number; subarray(begin: number, end: number): T }> {
  readonly buffer: T;
  #view: T;

  constructor(buffer: T) {
    this.buffer = buffer;
    this.#view = buffer.subarray(0, 0);
  }

  /** The first `length` elements of the buffer. */
  of(length: number): T {
    if (this.#view.length !== length) this.#view = this.buffer.subarray(0, length);
    return this.#view;
  }
}
