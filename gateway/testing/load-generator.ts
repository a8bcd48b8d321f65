import net from 'node:net';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { mulawEncode } from '../../codecs/index.ts';
import { sine } from './audio.ts';

/**
 * Twilio-protocol load for the gateway benchmark: N streams, each sending a 20 ms mu-law media message every
 * 20 ms, their phases spread evenly over the 20 ms so the load arrives as from many independent calls.
 *
 * Made to cost the generator as little as possible (it must not be the bottleneck): WebSocket framing by hand
 * over `net` sockets, every media message one prebuilt frame shared by all streams (the mask key is zero, so the
 * masked payload is the payload), and replies counted by their frame headers without parsing the JSON. The
 * gateway echoes one 20 ms message per 20 ms message received, so each reply closes the oldest open send of its
 * stream: that interval is the round trip.
 */

const STREAM_SID = 'MZ00000000000000000000000000bench';
const GROUPS = 20;
const FRAME_MS = 20;
/** Sends remembered per stream for round-trip matching; beyond that the stream is hopelessly behind. */
const RING = 256;

function clientFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const header =
    payload.length < 126
      ? Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0])
      : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff, 0, 0, 0, 0]);
  return Buffer.concat([header, payload]);
}

export function twilioStartText(token: string): string {
  return JSON.stringify({
    event: 'start',
    sequenceNumber: '1',
    streamSid: STREAM_SID,
    start: {
      streamSid: STREAM_SID,
      callSid: 'CAbench',
      tracks: ['inbound'],
      customParameters: { token },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
}

const MEDIA_FRAME = clientFrame(
  JSON.stringify({
    event: 'media',
    streamSid: STREAM_SID,
    media: { track: 'inbound', payload: Buffer.from(mulawEncode(sine(8000, 440, 160))).toString('base64') },
  }),
);

class BenchStream {
  private buffer: Buffer | undefined;
  private upgraded = false;
  private readonly sent = new Float64Array(RING);
  private head = 0;
  private tail = 0;
  received = 0;
  sentCount = 0;
  closed = false;

  constructor(
    private readonly socket: net.Socket,
    private readonly rtt: { histogram: RecordableHistogram },
    private readonly onUpgrade: () => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.data(chunk));
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {});
  }

  send(frame: Buffer, now: number): void {
    if (this.closed || !this.upgraded) return;
    this.socket.write(frame);
    this.sentCount++;
    if (this.tail - this.head < RING) this.sent[this.tail++ % RING] = now;
  }

  private data(chunk: Buffer): void {
    const buf = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
    this.buffer = undefined;
    let offset = 0;
    if (!this.upgraded) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        this.buffer = buf;
        return;
      }
      this.upgraded = true;
      offset = end + 4;
      this.onUpgrade();
    }
    const now = performance.now();
    while (buf.length - offset >= 2) {
      const opcode = buf[offset]! & 0x0f;
      let length = buf[offset + 1]! & 0x7f;
      let headerLength = 2;
      if (length === 126) {
        if (buf.length - offset < 4) break;
        length = buf.readUInt16BE(offset + 2);
        headerLength = 4;
      } else if (length === 127) {
        if (buf.length - offset < 10) break;
        length = Number(buf.readBigUInt64BE(offset + 2));
        headerLength = 10;
      }
      if (buf.length - offset < headerLength + length) break;
      if (opcode === 1 && this.head < this.tail) {
        this.received++;
        this.rtt.histogram.record(Math.max(1, Math.round((now - this.sent[this.head++ % RING]!) * 1000)));
      }
      offset += headerLength + length;
    }
    if (offset < buf.length) this.buffer = buf.subarray(offset);
  }

  destroy(): void {
    this.socket.destroy();
  }
}

export interface LoadResult {
  readonly streams: number;
  readonly sent: number;
  readonly received: number;
  readonly rttP50Ms: number;
  readonly rttP99Ms: number;
  /** CPU the generator used during the window, as a share of one core. */
  readonly cpu: number;
  readonly closedEarly: number;
}

export class TwilioLoad {
  private readonly streams: BenchStream[] = [];
  private readonly rtt = { histogram: createHistogram() };
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  /** Opens `tokens.length` streams (in batches, to spare the accept queue) and starts each with its token. */
  async open(tokens: readonly string[]): Promise<void> {
    const BATCH = 50;
    for (let i = 0; i < tokens.length; i += BATCH) {
      await Promise.all(tokens.slice(i, i + BATCH).map((token) => this.openOne(token)));
    }
  }

  private openOne(token: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.port, this.host);
      const stream = new BenchStream(socket, this.rtt, () => {
        socket.write(clientFrame(twilioStartText(token)));
        resolve();
      });
      socket.once('error', reject);
      socket.once('connect', () =>
        socket.write(
          `GET /media/twilio HTTP/1.1\r\nHost: ${this.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
        ),
      );
      this.streams.push(stream);
    });
  }

  /** Starts sending: every millisecond-ish tick sends the groups that are due, each group once per 20 ms. */
  start(): void {
    const origin = performance.now();
    const due = Array.from({ length: GROUPS }, (_, g) => origin + (g * FRAME_MS) / GROUPS);
    this.timer = setInterval(() => {
      const now = performance.now();
      for (let g = 0; g < GROUPS; g++) {
        // Catch up at most one period: a generator that fell behind sends late rather than in a burst.
        if (due[g]! > now) continue;
        for (let i = g; i < this.streams.length; i += GROUPS) this.streams[i]!.send(MEDIA_FRAME, now);
        due[g] = Math.max(due[g]! + FRAME_MS, now - FRAME_MS);
      }
    }, 1);
  }

  /** Measures from now until `stop()`. */
  async measure(windowMs: number): Promise<LoadResult> {
    const sent0 = this.total('sentCount');
    const received0 = this.total('received');
    this.rtt.histogram = createHistogram();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const cpu = process.cpuUsage(cpu0);
    const elapsed = performance.now() - t0;
    return {
      streams: this.streams.length,
      sent: this.total('sentCount') - sent0,
      received: this.total('received') - received0,
      rttP50Ms: this.rtt.histogram.count ? this.rtt.histogram.percentile(50) / 1000 : Number.NaN,
      rttP99Ms: this.rtt.histogram.count ? this.rtt.histogram.percentile(99) / 1000 : Number.NaN,
      cpu: (cpu.user + cpu.system) / 1000 / elapsed,
      closedEarly: this.streams.filter((s) => s.closed).length,
    };
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    for (const s of this.streams) s.destroy();
  }

  private total(key: 'sentCount' | 'received'): number {
    let sum = 0;
    for (const s of this.streams) sum += s[key];
    return sum;
  }
}
