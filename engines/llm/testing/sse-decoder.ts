/**
 * A minimal Server-Sent Events decoder: bytes in, the `data` of each complete event out. Reads may end anywhere
 * (inside a `data:` line, inside a multi-byte character, between the CR and LF of a line end); the incomplete
 * rest waits for the next read. Used by the plain-`fetch` client the SDK is measured against.
 */
export class SseDataDecoder {
  private readonly text = new TextDecoder();
  private pending = '';
  private data: string[] = [];

  /** The `data` of every event this read completes. */
  push(bytes: Uint8Array): string[] {
    return this.lines(this.pending + this.text.decode(bytes, { stream: true }), false);
  }

  /** At the end of the stream: a last event not followed by a blank line still counts. */
  end(): string[] {
    const events = this.lines(this.pending + this.text.decode(), true);
    if (this.data.length > 0) events.push(this.data.join('\n'));
    this.data = [];
    return events;
  }

  private lines(buffer: string, final: boolean): string[] {
    const events: string[] = [];
    let start = 0;
    for (let at = 0; at < buffer.length; at++) {
      const char = buffer.charCodeAt(at);
      if (char !== 10 && char !== 13) continue;
      // A CR at the very end may be the first half of CRLF: wait for the next read to know.
      if (char === 13 && at === buffer.length - 1 && !final) break;
      this.line(buffer.slice(start, at), events);
      if (char === 13 && buffer.charCodeAt(at + 1) === 10) at++;
      start = at + 1;
    }
    this.pending = buffer.slice(start);
    if (final && this.pending !== '') {
      this.line(this.pending, events);
      this.pending = '';
    }
    return events;
  }

  private line(line: string, events: string[]): void {
    if (line === '') {
      if (this.data.length > 0) events.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    this.data.push(value);
  }
}
