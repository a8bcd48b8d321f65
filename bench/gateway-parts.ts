/**
 * Where one Twilio frame pair's compute goes in the gateway (transport excluded), measured in process by CPU
 * time: each step of the echo path on its own, and the whole MediaSession.receive. What the whole costs beyond
 * the steps is the gateway's own bookkeeping (rate limit, telemetry, events, framing, outbound policy, the
 * message objects).
 */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { mulawDecode, mulawEncode, Resampler } from '../codecs/index.ts';
import { systemClock } from '../core/clock.ts';
import { MEDIA_ADAPTERS } from '../gateway/carriers/index.ts';
import { MediaMessageScanner } from '../gateway/carriers/media-message-scan.ts';
import { DEFAULT_STREAM_LIMITS } from '../gateway/limits.ts';
import { MediaSession } from '../gateway/media-session.ts';
import { GatewayMetrics } from '../gateway/metrics.ts';
import { Pacer } from '../gateway/pacer.ts';
import { sine } from '../gateway/testing/audio.ts';
import { echoHandler } from '../gateway/testing/echo-handler.ts';
import { twilioStartText } from '../gateway/testing/load-generator.ts';
import type { StreamTokens } from '../gateway/tokens.ts';

const STREAM_SID = 'MZ00000000000000000000000000bench';
const WARMUP_US = 200_000;

export interface FrameParts {
  /**
   * Reading the inbound media message's JSON as the adapters do: the media-message scanner, or TextDecoder +
   * JSON.parse for a message it declines.
   */
  readonly jsonUs: number;
  /** The inbound payload's base64 decode, and the outbound chunk's base64 encode into its message text. */
  readonly base64Us: number;
  /** mu-law decode of 160 bytes and encode of 160 samples. */
  readonly g711Us: number;
  /** 8 -> 16 kHz of 160 samples and 16 -> 8 kHz of 320. */
  readonly resampleUs: number;
  /** MediaSession.receive of one media message with the echo handler, transport a no-op: all of the above too. */
  readonly sessionUs: number;
  /** sessionUs less the steps measured apart. */
  readonly bookkeepingUs: number;
}

/** CPU time of this process in microseconds (user + system): immune to waiting for a core. */
function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** CPU µs per call of `fn`: warmed up, then the median of `runs` runs of about `runMs` of CPU each. */
export function cpuUsPerCall(fn: () => void, runs = 7, runMs = 30): number {
  // Warm up for at least WARMUP_US of CPU (the JIT settles over the first ~10^5 calls), which also sizes a run.
  let iterations = 1000;
  let warmed = 0;
  for (;;) {
    const start = cpuUs();
    for (let i = 0; i < iterations; i++) fn();
    const elapsed = cpuUs() - start;
    warmed += elapsed;
    if (elapsed > 20_000 && warmed > WARMUP_US) {
      iterations = Math.max(100, Math.round((iterations * runMs * 1000) / elapsed));
      break;
    }
    if (elapsed <= 20_000) iterations *= 2;
  }
  const per: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = cpuUs();
    for (let i = 0; i < iterations; i++) fn();
    per.push((cpuUs() - start) / iterations);
  }
  per.sort((a, b) => a - b);
  return per[Math.floor(per.length / 2)]!;
}

function mediaMessage(): Buffer {
  const ulaw = mulawEncode(sine(8000, 440, 160));
  return Buffer.from(
    JSON.stringify({
      event: 'media',
      streamSid: STREAM_SID,
      media: { track: 'inbound', payload: Buffer.from(ulaw).toString('base64') },
    }),
  );
}

async function sessionUsPerMessage(tokens: StreamTokens, media: Buffer): Promise<number> {
  const silent = pino({ level: 'silent' });
  const pacer = new Pacer();
  const session = new MediaSession({
    carrier: 'twilio',
    adapter: MEDIA_ADAPTERS.twilio({
      query: new URLSearchParams(),
      pathCallId: undefined,
      newStreamId: () => 's',
    }),
    transport: { send: () => 'sent', bufferedAmount: () => 0, cork: (fn) => fn(), close: () => {} },
    tokens,
    handlerFactory: echoHandler,
    metrics: new GatewayMetrics(new Registry()),
    pacer,
    logger: silent,
    clock: systemClock,
    limits: {
      ...DEFAULT_STREAM_LIMITS,
      messagesPerSec: 1e9,
      messageBurst: 1e9,
      bytesPerSec: 1e12,
      byteBurst: 1e12,
    },
    urlToken: undefined,
    statedCallId: undefined,
    onEnd: () => {},
  });
  session.open();
  session.receive(Buffer.from(twilioStartText(tokens.mint('call_parts', 'twilio', 600_000))), false);
  // The token check resolves on a later tick.
  await new Promise((resolve) => setTimeout(resolve, 10));
  let housekeeping = 0;
  const us = cpuUsPerCall(() => {
    session.receive(media, false);
    // Once a second of stream time, as the gateway does: keeps the telemetry and metrics in their steady state.
    if (++housekeeping % 50 === 0) session.housekeeping(performance.now());
  });
  session.close('normal');
  pacer.close();
  return us;
}

export async function measureFrameParts(tokens: StreamTokens): Promise<FrameParts> {
  const media = mediaMessage();
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const scanner = new MediaMessageScanner();
  let sink: unknown;
  const jsonUs = cpuUsPerCall(() => {
    sink = scanner.scan(media) ? scanner.fields : JSON.parse(decoder.decode(media));
  });
  const payload = (JSON.parse(media.toString()) as { media: { payload: string } }).media.payload;
  const decoded = Buffer.alloc(240);
  const prefix = `{"event":"media","streamSid":${JSON.stringify(STREAM_SID)},"media":{"payload":"`;
  const encoded = Buffer.from(payload, 'base64');
  const base64Us = cpuUsPerCall(() => {
    decoded.write(payload, 0, 'base64');
    sink = `${prefix}${encoded.toString('base64', 0, 160)}"}}`;
  });
  const ulaw = Buffer.from(payload, 'base64');
  const pcm8k = new Int16Array(160);
  const ulawOut = new Uint8Array(160);
  const g711Us = cpuUsPerCall(() => {
    mulawDecode(ulaw, pcm8k);
    mulawEncode(pcm8k, ulawOut);
  });
  const up = new Resampler(8000, 16_000);
  const down = new Resampler(16_000, 8000);
  const pcm16k = new Int16Array(320);
  const back = new Int16Array(160);
  mulawDecode(ulaw, pcm8k);
  const resampleUs = cpuUsPerCall(() => {
    up.processInto(pcm8k, pcm16k);
    down.processInto(pcm16k, back);
  });
  void sink;
  const sessionUs = await sessionUsPerMessage(tokens, media);
  return {
    jsonUs,
    base64Us,
    g711Us,
    resampleUs,
    sessionUs,
    bookkeepingUs: Math.max(0, sessionUs - jsonUs - base64Us - g711Us - resampleUs),
  };
}
