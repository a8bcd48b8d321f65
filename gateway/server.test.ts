/**
 * The gateway server itself: native uWS or refusal, /healthz, static files, metrics, shutdown, per-route
 * payload limits, the start timeout, a failing handler, and the tone handler's marks.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { mulawDecode } from '../codecs/index.ts';
import { CLOSE } from './close-codes.ts';
import { DEFAULT_GATEWAY_LIMITS } from './limits.ts';
import type { MediaHandlerFactory } from './media-handler.ts';
import { toneShare } from './testing/audio.ts';
import { echoHandler } from './testing/echo-handler.ts';
import { startTestGateway, TestClient, type TestGateway, waitForSummary } from './testing/harness.ts';
import { toneHandlerFactory } from './testing/tone-handler.ts';

const SID = 'MZ0000000000000000000000000000abcd';
const silence = Buffer.alloc(160, 0xff).toString('base64');

function twilioStart(token: string) {
  return {
    event: 'start',
    streamSid: SID,
    start: {
      streamSid: SID,
      callSid: 'CA1',
      customParameters: { token },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  };
}

async function twilioStream(gw: TestGateway, callId: string): Promise<TestClient> {
  const c = await TestClient.open(gw.url('/media/twilio'));
  c.send(twilioStart(gw.mint(callId, 'twilio')));
  return c;
}

/** Sends one 20 ms frame and waits for the echo: proof the stream (and the process) are alive. */
async function echoes(c: TestClient): Promise<void> {
  const before = c.json().filter((m) => m.event === 'media').length;
  c.send({ event: 'media', streamSid: SID, media: { payload: silence } });
  await c.waitFor(() => c.json().filter((m) => m.event === 'media').length > before, 5000, 'echo');
}

describe('gateway server', () => {
  let gw: TestGateway;
  const handlerFactory: MediaHandlerFactory = (ctx) => {
    if (ctx.customParameters.fail === 'factory') throw new Error('handler exploded');
    return echoHandler(ctx);
  };
  before(async () => {
    gw = await startTestGateway({ handlerFactory });
  });
  after(() => gw.close());

  test('runs on the native uWS binary; /healthz says so', async () => {
    assert.equal(gw.gateway.stats().native, true);
    const res = await fetch(gw.http('/healthz'));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.deepEqual(await res.json(), { status: 'ok', native: true, streams: 0 });
  });

  test('serves the browser client and demo page, nothing else', async () => {
    const client = await fetch(gw.http('/web/static/client.js'));
    assert.equal(client.status, 200);
    assert.match(client.headers.get('content-type') ?? '', /javascript/);
    assert.match(await client.text(), /export class WebCall/);
    const page = await fetch(gw.http('/web/static/index.html'));
    assert.match(await page.text(), /<title>Voice agent web call<\/title>/);
    assert.equal((await fetch(gw.http('/web/static/worklet.js'))).status, 200);
    for (const path of [
      '/web/static/server.ts',
      '/web/static/..%2F..%2Fserver.ts',
      '/nope',
      '/media/twilio',
    ]) {
      assert.equal((await fetch(gw.http(path))).status, 404, path);
    }
    const root = await fetch(gw.http('/'), { redirect: 'manual' });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/web/static/index.html');
  });

  test('per-stream telemetry reaches the registry as gateway_* metrics', async () => {
    const c = await twilioStream(gw, 'call_M1');
    await echoes(c);
    await echoes(c);
    assert.equal(gw.gateway.stats().streams.find((s) => s.callId === 'call_M1')?.state, 'live');
    c.close();
    const summary = await waitForSummary(gw, 'call_M1');
    assert.equal(summary.inbound.frames, 2);
    const text = await gw.registry.metrics();
    assert.match(text, /gateway_native 1/);
    assert.match(text, /gateway_inbound_frames_total\{carrier="twilio"\} [1-9]/);
    assert.match(text, /gateway_outbound_messages_total\{carrier="twilio"\} [1-9]/);
    assert.match(text, /gateway_streams_opened_total\{carrier="twilio"\} [1-9]/);
    assert.match(text, /gateway_streams_closed_total\{carrier="twilio",reason="peer_closed"\} [1-9]/);
  });

  test('a message over the route limit closes that socket only', async () => {
    const other = await twilioStream(gw, 'call_L1');
    await echoes(other);
    const big = await twilioStream(gw, 'call_L2');
    await echoes(big);
    big.send('x'.repeat(70 * 1024));
    // uWS drops such a connection at once, without a close frame: 1006 on both sides.
    assert.equal((await big.closed).code, 1006);
    const summary = await waitForSummary(gw, 'call_L2');
    assert.equal(summary.closeCode, 1006);
    await echoes(other);
    other.close();
  });

  test('a socket that never starts is closed with 4010 (slowloris)', async () => {
    const strict = await startTestGateway({ limits: { startTimeoutMs: 300, housekeepingMs: 50 } });
    try {
      const c = await TestClient.open(strict.url('/media/twilio'));
      assert.deepEqual(await c.closed, { code: CLOSE.start_timeout, reason: 'start_timeout' });
    } finally {
      await strict.close();
    }
  });

  test('a handler that throws ends its stream with 4015; other streams go on', async () => {
    const healthy = await twilioStream(gw, 'call_H1');
    await echoes(healthy);
    const c = await TestClient.open(gw.url('/media/twilio'));
    const start = twilioStart(gw.mint('call_H2', 'twilio'));
    c.send({
      ...start,
      start: { ...start.start, customParameters: { ...start.start.customParameters, fail: 'factory' } },
    });
    assert.deepEqual(await c.closed, { code: CLOSE.handler_failed, reason: 'handler_failed' });
    await echoes(healthy);
    healthy.close();
  });

  test('a started stream that goes silent is dropped by the route idle timeout', async () => {
    const quiet = await startTestGateway({
      limits: {
        routes: { ...DEFAULT_GATEWAY_LIMITS.routes, twilio: { maxPayloadLength: 65536, idleTimeoutS: 8 } },
      },
    });
    try {
      const c = await twilioStream(quiet, 'call_IDLE');
      await echoes(c);
      assert.equal((await c.closed).code, 1006, 'uWS closes idle sockets without a close frame');
      assert.equal((await waitForSummary(quiet, 'call_IDLE')).endReason, 'closed');
    } finally {
      await quiet.close();
    }
  });

  test('an idle timeout uWS would abort on is refused up front', async () => {
    await assert.rejects(
      startTestGateway({
        limits: {
          routes: { ...DEFAULT_GATEWAY_LIMITS.routes, web: { maxPayloadLength: 16384, idleTimeoutS: 4 } },
        },
      }),
      RangeError,
    );
  });

  test('close() ends open streams with 1001 and stops listening', async () => {
    const own = await startTestGateway();
    const c = await twilioStream(own, 'call_C1');
    await echoes(c);
    await own.close();
    assert.deepEqual(await c.closed, { code: CLOSE.going_away, reason: 'going_away' });
    await assert.rejects(fetch(own.http('/healthz')));
  });
});

describe('backpressure', () => {
  test('a peer that stops reading: audio is dropped over the high-water mark, then the stream is closed (4016)', async () => {
    // The agent keeps talking a minute of audio (1.92 MB of PCM16) every 20 ms until the stream ends: however
    // much the kernel's socket buffers hold on this machine, they fill, and the gateway must stop queueing.
    const minute = new Int16Array(16000 * 60);
    let offeredMinutes = 0;
    const gw = await startTestGateway({
      handlerFactory: (ctx) => {
        let talking: NodeJS.Timeout | undefined;
        const talk = (): void => {
          offeredMinutes++;
          ctx.output.sendAudio(minute);
        };
        return {
          onStart: () => {
            talk();
            talking = setInterval(talk, 20);
          },
          onAudio() {},
          onStop: () => clearInterval(talking),
        };
      },
      limits: { closeAfterMs: 300, housekeepingMs: 50 },
    });
    try {
      const c = await TestClient.open(gw.url(`/web/call_BP?token=${gw.mint('call_BP', 'web')}`));
      (c.ws as unknown as { _socket: { pause(): void } })._socket.pause();
      c.send({ type: 'hello' });
      const summary = await waitForSummary(gw, 'call_BP', 20_000);
      assert.equal(summary.closeCode, CLOSE.backpressure);
      assert.equal(summary.outbound.backpressureEvents, 1);
      assert.ok(
        summary.outbound.droppedMessages > 1000,
        `${summary.outbound.droppedMessages} frames dropped`,
      );
      const offeredFrames = offeredMinutes * 3000;
      assert.ok(
        summary.outbound.audioMessages < offeredFrames / 2,
        `${summary.outbound.audioMessages} of ${offeredFrames} frames queued: most were dropped`,
      );
      c.ws.terminate();
    } finally {
      await gw.close();
    }
  });
});

describe('tone handler', () => {
  test('plays a tone, marks it, plays the next once the mark comes back played', async () => {
    const gw = await startTestGateway({
      handlerFactory: toneHandlerFactory({ frequencyHz: 1000, durationMs: 200, repeats: 2, gapMs: 10 }),
    });
    try {
      const c = await twilioStream(gw, 'call_TONE');
      await c.waitFor(() => c.json().some((m) => m.event === 'mark'), 5000, 'first mark');
      const media = c.json().filter((m) => m.event === 'media') as { media: { payload: string } }[];
      const audio = mulawDecode(Buffer.concat(media.map((m) => Buffer.from(m.media.payload, 'base64'))));
      assert.ok(audio.length >= 1600, '200 ms at 8 kHz');
      assert.ok(toneShare(audio.subarray(100, 1500), 8000, 1000) > 0.97);
      c.send({ event: 'mark', streamSid: SID, mark: { name: 'tone-1' } });
      await c.waitFor(() => c.json().filter((m) => m.event === 'mark').length === 2, 5000, 'second mark');
      assert.deepEqual(
        c
          .json()
          .filter((m) => m.event === 'mark')
          .map((m) => (m.mark as { name: string }).name),
        ['tone-1', 'tone-2'],
      );
      c.close();
      await c.closed;
    } finally {
      await gw.close();
    }
  });
});

describe('JavaScript fallback', () => {
  const script = fileURLToPath(new URL('./testing/fallback-probe.ts', import.meta.url));
  const run = (allow: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', script, allow], {
      env: { ...process.env, UWS_USE_FALLBACK: '1' },
      encoding: 'utf8',
      timeout: 60_000,
    });

  test('refuses to start on the fallback unless allowed', () => {
    const refused = run('0');
    assert.match(refused.stdout, /refused FallbackRefusedError/);
    const allowed = run('1');
    assert.match(allowed.stdout, /started native=false/);
  });
});
