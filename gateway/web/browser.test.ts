/**
 * End to end in a real browser: headless Chromium opens the demo page served by the gateway, captures a fake
 * microphone (a WAV file with a 440 Hz tone) through getUserMedia and the AudioWorklet client, streams it to the
 * echo handler, and plays back what comes back; a DTMF press yields a mark that the browser acknowledges once
 * played; hanging up ends the stream with `bye`. Run with PCM16, with Opus (WebCodecs in the page, the server's
 * Opus codec on the other side), and with Opus asked for where the page cannot have it (the PCM16 fallback).
 * Skipped when Chromium is not installed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { writeWav } from '../../codecs/index.ts';
import type { MediaHandlerFactory } from '../media-handler.ts';
import { concat, rms, sine, toneShare } from '../testing/audio.ts';
import { chromiumMissing, launchChromium } from '../testing/chromium.ts';
import {
  type RecordedEvent,
  recordingEcho,
  startTestGateway,
  type TestGateway,
  waitForSummary,
} from '../testing/harness.ts';

interface PageStats {
  codec: string;
  framesSent: number;
  audioMessagesReceived: number;
  audioBytesReceived: number;
  audioMsReceived: number;
  marksPlayed: number;
  decodeErrors: number;
}

/**
 * The median share of the 440 Hz tone over 100 ms blocks of what the handler received. Judged per block: a slow
 * machine's fake capture device can skip a buffer or restart the file, and such a phase jump would lower a
 * single Goertzel over the whole capture without the audio being any less the tone.
 */
function medianToneShare(captured: Int16Array): { median: number; blocks: number } {
  const shares: number[] = [];
  for (let at = 0; at + 1600 <= captured.length; at += 1600) {
    shares.push(toneShare(captured.subarray(at, at + 1600), 16000, 440));
  }
  shares.sort((a, b) => a - b);
  return { median: shares[Math.floor(shares.length / 2)] ?? 0, blocks: shares.length };
}

describe('demo page in headless Chromium', {
  skip: chromiumMissing,
}, () => {
  let gw: TestGateway;
  let browser: Browser;
  let dir: string;
  const events: RecordedEvent[] = [];
  const frames: Int16Array[] = [];

  before(async () => {
    const echo = recordingEcho(events);
    const handlerFactory: MediaHandlerFactory = (ctx) => {
      const handler = echo(ctx);
      return {
        ...handler,
        onAudio(frame) {
          frames.push(frame);
          handler.onAudio(frame);
        },
      };
    };
    gw = await startTestGateway({ handlerFactory });
    dir = mkdtempSync(path.join(tmpdir(), 'gateway-browser-'));
    const wav = path.join(dir, 'tone.wav');
    writeFileSync(wav, writeWav({ sampleRate: 16000, channels: [sine(16000, 440, 16000 * 5, 10000)] }));
    browser = await launchChromium(wav);
  });

  after(async () => {
    await browser?.close();
    await gw?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('streams the microphone to the echo handler and plays the echo back; marks are acknowledged', async () => {
    events.length = 0;
    frames.length = 0;
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    const token = gw.mint('call_BROWSER', 'web');
    await page.goto(
      gw.http(`/web/static/index.html?call_id=call_BROWSER&token=${token}&autostart=1&processing=0`),
    );
    // Page-side expressions are strings: this project's TypeScript has no DOM types.
    const stats = () => page.evaluate('window.webCall?.stats') as Promise<PageStats | undefined>;

    await page.waitForFunction('(window.webCall?.stats.audioBytesReceived ?? 0) >= 64000', undefined, {
      timeout: 20_000,
    });
    const mid = await stats();
    assert.ok(mid && mid.framesSent >= 50, `the page sent ${mid?.framesSent} frames`);
    assert.ok(mid.audioMessagesReceived >= 50, 'and received the echo as 20 ms frames');
    assert.equal(await page.textContent('#state'), 'Connected');

    await page.click('#keypad-panel summary');
    await page.click('#keypad button:first-child');
    await page.waitForFunction('(window.webCall?.stats.marksPlayed ?? 0) >= 1', undefined, {
      timeout: 10_000,
    });
    await page.click('#hangup');
    await page.waitForFunction("document.querySelector('#state')?.textContent === 'Ended'", undefined, {
      timeout: 10_000,
    });
    const summary = await waitForSummary(gw, 'call_BROWSER');
    await page.close();

    assert.deepEqual(errors, []);
    assert.equal(summary.carrier, 'web');
    assert.equal(summary.endReason, 'bye');
    assert.ok(summary.inbound.frames >= 50);
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [{ name: 'dtmf-1-1', dropped: false }],
      'the browser acknowledged the mark after playing the audio before it',
    );
    // What the fake microphone captured reached the server as the 440 Hz tone.
    const captured = concat(frames.slice(25));
    assert.ok(rms(captured) > 1000, `captured audio is not silence (rms ${rms(captured).toFixed(0)})`);
    const { median, blocks } = medianToneShare(captured);
    assert.ok(blocks >= 5 && median > 0.9, `the tone arrives at 440 Hz (median block share ${median})`);
  });

  test('with codec=opus the page encodes and decodes Opus with WebCodecs', async (t) => {
    events.length = 0;
    frames.length = 0;
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    const token = gw.mint('call_BROWSER_OPUS', 'web');
    await page.goto(
      gw.http(
        `/web/static/index.html?call_id=call_BROWSER_OPUS&token=${token}&autostart=1&processing=0&codec=opus`,
      ),
    );
    const stats = () => page.evaluate('window.webCall?.stats') as Promise<PageStats | undefined>;

    await page.waitForFunction('(window.webCall?.stats.audioMsReceived ?? 0) >= 2000', undefined, {
      timeout: 20_000,
    });
    const mid = await stats();
    assert.equal(mid?.codec, 'opus');
    assert.ok(mid.framesSent >= 50, `the page sent ${mid.framesSent} Opus packets`);
    assert.ok(mid.audioMessagesReceived >= 50, 'and received the echo as Opus packets');
    // 20 ms of 16-bit PCM would be 640 bytes; an Opus packet at 24 kb/s is about 60.
    assert.ok(mid.audioBytesReceived / mid.audioMessagesReceived < 320, 'the echo came back compressed');
    assert.equal(mid.decodeErrors, 0);
    assert.equal(await page.textContent('#state'), 'Connected');

    await page.click('#keypad-panel summary');
    const key = (digit: string) => page.locator('#keypad button', { hasText: digit }).click();
    await key('1');
    await page.waitForFunction('(window.webCall?.stats.marksPlayed ?? 0) >= 1', undefined, {
      timeout: 10_000,
    });
    // `*` makes the echo handler clear: the page resets its decoder and playback, then goes on playing and
    // acknowledging marks.
    await key('*');
    await page.waitForFunction("document.querySelector('#log')?.textContent?.includes('playback cleared')");
    const cleared = (await stats())!;
    await page.waitForFunction(
      `(window.webCall?.stats.audioMsReceived ?? 0) >= ${cleared.audioMsReceived + 500}`,
      undefined,
      { timeout: 10_000 },
    );
    await key('2');
    await page.waitForFunction('(window.webCall?.stats.marksPlayed ?? 0) >= 2', undefined, {
      timeout: 10_000,
    });
    const end = (await stats())!;
    await page.click('#hangup');
    await page.waitForFunction("document.querySelector('#state')?.textContent === 'Ended'", undefined, {
      timeout: 10_000,
    });
    const summary = await waitForSummary(gw, 'call_BROWSER_OPUS');
    await page.close();

    assert.deepEqual(errors, []);
    assert.equal(end.decodeErrors, 0);
    assert.deepEqual(summary.format, { encoding: 'opus', sampleRate: 48000, channels: 1 });
    assert.equal(summary.outbound.clears, 1);
    assert.equal(summary.endReason, 'bye');
    assert.equal(summary.inbound.badMessages, 0, 'every packet the page sent decoded');
    assert.ok(summary.inbound.frames >= 50);
    assert.deepEqual(
      events.filter((e) => e.type === 'ack').map((e) => e.type === 'ack' && e.ack),
      [
        { name: 'dtmf-1-1', dropped: false },
        { name: 'dtmf-2-2', dropped: false },
      ],
      'the browser acknowledged each mark after playing the decoded audio before it',
    );
    const captured = concat(frames.slice(25));
    assert.ok(rms(captured) > 1000, `captured audio is not silence (rms ${rms(captured).toFixed(0)})`);
    const { median, blocks } = medianToneShare(captured);
    t.diagnostic(`opus: median 440 Hz share ${median.toFixed(4)} over ${blocks} blocks`);
    // Opus at 24 kb/s keeps a steady tone intact: the median measures 0.999 to 1, as with PCM16.
    assert.ok(blocks >= 5 && median > 0.9, `the tone arrives at 440 Hz (median block share ${median})`);
  });

  test('with codec=opus but no WebCodecs Opus the page falls back to PCM16 and says so', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.addInitScript('delete window.AudioEncoder');
    const token = gw.mint('call_BROWSER_FALLBACK', 'web');
    await page.goto(
      gw.http(
        `/web/static/index.html?call_id=call_BROWSER_FALLBACK&token=${token}&autostart=1&processing=0&codec=opus`,
      ),
    );
    await page.waitForFunction('(window.webCall?.stats.audioBytesReceived ?? 0) >= 6400', undefined, {
      timeout: 20_000,
    });
    const stats = (await page.evaluate('window.webCall.stats')) as PageStats & { codecFallback?: string };
    assert.equal(stats.codec, 'pcm16');
    assert.match(stats.codecFallback ?? '', /Opus is not available/);
    assert.equal(await page.textContent('#state'), 'Connected');
    assert.match((await page.textContent('#notice')) ?? '', /Opus is not available/);
    await page.click('#hangup');
    const summary = await waitForSummary(gw, 'call_BROWSER_FALLBACK');
    await page.close();
    assert.deepEqual(errors, []);
    assert.deepEqual(summary.format, { encoding: 'pcm16', sampleRate: 16000, channels: 1 });
  });
});
