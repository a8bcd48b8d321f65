/**
 * The speech APIs, black box. Live speech to text over the gateway: the platform (api and gateway roles) with the local
 * PocketSphinx engine for English. The caller's speech is made by the platform's own text to speech (the local
 * eSpeak NG voices) in the session's encoding: mu-law 8 kHz and PCM16 16 kHz. Sessions authenticate with a key
 * or a minted single-use token; each utterance gets exactly one final, and `session.end`'s cost is the ledger
 * entry. Refusals (bad settings, language, wallet, token reuse and expiry, too many sessions) come as an `error`
 * event then a close with its code. Text to speech with a local voice in every format, its cost read back
 * equal to its ledger entry. Skipped when PocketSphinx or espeak-ng is not installed.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { mulawEncode, OpusCodec, pcm16ToBytes, Resampler, writeWav } from '../../codecs/index.ts';
import { writeOggOpus } from '../../codecs/ogg-opus.ts';
import type { Clock } from '../../core/clock.ts';
import { newId } from '../../core/ids.ts';
import { TranscriptionAudio } from '../../core/speech/transcription-audio.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../../engines/stt/index.ts';
import { concat, espeak, espeakInstalled, wordOverlap } from '../../engines/stt/testing/speech.ts';
import { chromiumMissing, launchChromium } from '../../gateway/testing/chromium.ts';
import { backends, client, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { RawConnection } from '../support/raw-http.ts';

const [embedded, shared] = await backends();

interface SpeechEvent {
  event: string;
  code?: string;
  text?: string;
  utterance?: number;
  session_id?: string;
  audio_seconds_billed?: number;
  cost_paise?: number;
  words?: unknown[];
  language?: string;
}

/** A session as the client sees it: every event, and the close code once closed. */
class Session {
  readonly events: SpeechEvent[] = [];
  closeCode: number | undefined;
  readonly closed: Promise<void>;
  readonly opened: Promise<void>;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => this.events.push(JSON.parse(String(data)) as SpeechEvent));
    this.closed = new Promise((resolve) =>
      ws.on('close', (code) => {
        this.closeCode = code;
        resolve();
      }),
    );
    this.opened = new Promise((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
  }

  send(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  named(event: string): SpeechEvent[] {
    return this.events.filter((e) => e.event === event);
  }

  async until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(this.events)}`);
      await sleep(20);
    }
  }
}

/** A clock that can be moved forward (token expiry) while time otherwise runs. */
class ShiftedClock implements Clock {
  shiftMs = 0;
  now(): number {
    return Date.now() + this.shiftMs;
  }
}

/** eSpeak NG speech (the espeak-ng program, as the STT suites use), in the session's encoding. */
function speech(text: string, format: 'mulaw' | 'pcm16', sampleRate: number): Buffer {
  let audio = espeak(text);
  if (sampleRate !== 16000) {
    const resampler = new Resampler(16000, sampleRate);
    audio = concat(resampler.process(audio), resampler.flush());
  }
  return format === 'mulaw' ? Buffer.from(mulawEncode(audio)) : Buffer.from(pcm16ToBytes(audio));
}

function quiet(ms: number, format: 'mulaw' | 'pcm16', sampleRate: number): Buffer {
  const samples = (ms * sampleRate) / 1000;
  return format === 'mulaw' ? Buffer.alloc(samples, 0xff) : Buffer.alloc(samples * 2);
}

/** Sends `audio` in 100 ms pieces, `speedup` times faster than real time. */
async function stream(session: Session, audio: Buffer, bytesPer100Ms: number, binary: boolean, speedup = 4) {
  for (let at = 0; at < audio.length; at += bytesPer100Ms) {
    const piece = audio.subarray(at, at + bytesPer100Ms);
    if (binary) session.ws.send(piece);
    else session.send({ event: 'audio_input', audio: piece.toString('base64') });
    await sleep(100 / speedup);
  }
}

function downsample(audio: Int16Array): Int16Array {
  const resampler = new Resampler(16000, 8000);
  return concat(resampler.process(audio), resampler.flush());
}

/**
 * Runs in the page (as source: the project compiles without the DOM's types): the microphone at 16 kHz, as
 * PCM16 binary frames, bracketed as one utterance for `captureMs`; answers every event the session sent.
 */
const CAPTURE_IN_BROWSER = `async ({ url, captureMs }) => {
  const events = [];
  const microphone = await navigator.mediaDevices.getUserMedia({
    audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext({ sampleRate: 16000 });
  const source = context.createMediaStreamSource(microphone);
  const processor = context.createScriptProcessor(2048, 1, 1);
  const ws = new WebSocket(url);
  ws.onmessage = (message) => events.push(JSON.parse(String(message.data)));
  const closed = new Promise((resolve) => { ws.onclose = resolve; });
  await new Promise((resolve) => { ws.onopen = resolve; });
  ws.send(JSON.stringify({ event: 'speech_start' }));
  processor.onaudioprocess = (event) => {
    const input = event.inputBuffer.getChannelData(0);
    const pcm = new Int16Array(input.length);
    for (let i = 0; i < input.length; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round(input[i] * 32767)));
    if (ws.readyState === WebSocket.OPEN) ws.send(pcm.buffer);
  };
  source.connect(processor);
  processor.connect(context.destination);
  await new Promise((resolve) => setTimeout(resolve, captureMs));
  processor.disconnect();
  ws.send(JSON.stringify({ event: 'speech_end' }));
  ws.send(JSON.stringify({ event: 'end' }));
  await closed;
  return events;
}`;

async function ledgerEntry(base: string, key: string, reference: string): Promise<number | undefined> {
  const page = await client(base, key)<{ data: { reference: string; amount_paise: number }[] }>(
    'GET',
    '/v2/wallet/transactions?limit=100',
  );
  return page.body.data.find((t) => t.reference === reference)?.amount_paise;
}

interface TranscriptionJob {
  id: string;
  object: string;
  status: string;
  duration_secs: number | null;
  channels: number | null;
  speakers_method: string | null;
  segments: { speaker: string; start_ms: number; end_ms: number; text: string; language: string }[];
  failure: string | null;
  cost_paise: number;
}

/** Serves `body` at a loopback URL (any path) until closed: a customer's file server. */
async function serveOnce(body: Buffer, type: string, status = 200) {
  const server = http.createServer((_request, response) => {
    response.writeHead(status, { 'content-type': type, 'content-length': body.length });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/recording`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function espeakAt8k(text: string): Int16Array {
  const resampler = new Resampler(16000, 8000);
  const audio = espeak(text);
  return concat(resampler.process(audio), resampler.flush());
}

/** The workspace of the suite's key (its audio is kept under a directory of that name). */
let speechWorkspaceId = '';

/** Phrases the small agent-calls model hears well in eSpeak NG's voice, at 8 and 16 kHz. */
const PHRASES = ['i want to book an appointment', 'i would like to speak to an agent'];

describe('the speech APIs: live speech to text over the gateway, text to speech', {
  skip:
    (!SphinxTranscriber.available() && 'PocketSphinx is not installed') ||
    (!espeakInstalled() && 'espeak-ng is not installed'),
}, () => {
  const clock = new ShiftedClock();
  let platform: TestPlatform;
  let api: ReturnType<typeof client>;
  let apiKey: string;
  let gateway: string;

  const open = (query: string, headers: Record<string, string> = {}): Session =>
    new Session(new WebSocket(`${gateway}/v1/audio/transcriptions/stream?${query}`, { headers }));
  const withKey = (query: string, key = apiKey) => open(query, { authorization: `Bearer ${key}` });

  const ledgerAmount = (key: string, reference: string) => ledgerEntry(platform.url, key, reference);

  function assertSessionShape(session: Session, utterances: number): void {
    assert.equal(session.events[0]?.event, 'session.begin');
    assert.equal(session.events.at(-1)?.event, 'session.end');
    const finals = session.named('transcript.final');
    assert.deepEqual(
      finals.map((f) => f.utterance),
      Array.from({ length: utterances }, (_, i) => i + 1),
      'exactly one final per utterance, in order',
    );
    for (const final of finals) {
      assert.equal(final.language, 'en-IN');
      assert.ok(Array.isArray(final.words));
    }
    // The words come through. How well the small local model hears them is its own suite's question
    // (engines/stt/sphinx.test.ts); on a loaded machine it hears eSpeak's voice less well.
    const heard = finals.map((f) => f.text).join(' ');
    assert.ok(wordOverlap(heard, PHRASES.join(' ')) >= 0.2, `heard "${heard}"`);
    assert.ok(session.named('transcript.partial').length > 0, 'partials while an utterance is open');
  }

  before(async () => {
    platform = await startTestPlatform(embedded!, {
      env: {
        ROLES: 'api,gateway,worker',
        TRANSCRIPTION_JOB_POLL_MS: '100',
        TRANSCRIPTION_JOB_LEASE_MS: '2000',
        // The recordings of `audio_url` jobs are served on loopback.
        ALLOW_PRIVATE_WEBHOOKS: 'true',
      },
      clock,
    });
    const workspace = await provisionWorkspace(platform.platform.store, {
      name: 'Speech',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    apiKey = workspace.api_key;
    speechWorkspaceId = workspace.workspace_id;
    api = client(platform.url, apiKey);
    gateway = platform.platform.gatewayUrl!;
  });

  after(async () => {
    await platform?.close();
  });

  test('Bearer key, mu-law 8 kHz, manual endpointing: one final per bracketed utterance, billed once', async () => {
    const said = PHRASES.map((p) => speech(p, 'mulaw', 8000));
    const session = withKey('language_code=en-IN&encoding=mulaw&sample_rate=8000&endpointing=manual');
    await session.opened;
    await session.until('session.begin', () => session.named('session.begin').length === 1);
    // Audio outside an utterance is dropped, not billed.
    await stream(session, quiet(300, 'mulaw', 8000), 800, false, 10);
    for (const audio of said) {
      session.send({ event: 'speech_start' });
      await stream(
        session,
        Buffer.concat([quiet(200, 'mulaw', 8000), audio, quiet(300, 'mulaw', 8000)]),
        800,
        false,
      );
      session.send({ event: 'speech_end' });
    }
    session.send({ event: 'end' });
    await session.closed;
    assert.equal(session.closeCode, 1000);
    assertSessionShape(session, 2);
    const end = session.named('session.end')[0]!;
    const seconds = said.reduce((s, a) => s + a.length / 8000 + 0.5, 0);
    assert.equal(end.audio_seconds_billed, Math.ceil(seconds - 1e-9));
    assert.ok((end.cost_paise ?? 0) > 0);
    assert.equal(await ledgerAmount(apiKey, end.session_id!), -(end.cost_paise ?? 0));
  });

  test('a minted token, PCM16 16 kHz in binary frames, auto endpointing; the token is good once', async () => {
    const minted = await api<{ token: string; url: string; expires_at: string }>(
      'POST',
      '/v2/stream-tokens',
      {
        body: { ttl_secs: 60, language_code: 'en-IN' },
      },
    );
    assert.equal(minted.status, 201, minted.text);
    assert.match(minted.body.url, /\/v1\/audio\/transcriptions\/stream$/);
    const said = PHRASES.map((p) => speech(p, 'pcm16', 16000));
    const query = `language_code=en-IN&encoding=pcm16&sample_rate=16000&endpointing=auto&token=${encodeURIComponent(minted.body.token)}`;
    const session = open(query);
    await session.opened;
    const gap = quiet(1500, 'pcm16', 16000);
    await stream(
      session,
      Buffer.concat([quiet(500, 'pcm16', 16000), said[0]!, gap, said[1]!, gap]),
      3200,
      true,
      2,
    );
    session.send({ event: 'end' });
    await session.closed;
    assertSessionShape(session, 2);
    const end = session.named('session.end')[0]!;
    assert.equal(await ledgerAmount(apiKey, end.session_id!), -(end.cost_paise ?? 0));

    const again = open(query);
    await again.closed;
    assert.deepEqual(
      again.events.map((e) => [e.event, e.code]),
      [['error', 'token_reused']],
    );
    assert.equal(again.closeCode, 4401);
  });

  test('an expired token is refused; a token bound to a language refuses another', async () => {
    const expiring = await api<{ token: string }>('POST', '/v2/stream-tokens', { body: { ttl_secs: 10 } });
    const bound = await api<{ token: string }>('POST', '/v2/stream-tokens', {
      body: { language_code: 'hi-IN' },
    });
    clock.shiftMs += 16_000;
    try {
      const expired = open(`language_code=en-IN&token=${encodeURIComponent(expiring.body.token)}`);
      await expired.closed;
      assert.equal(expired.events[0]?.code, 'token_expired');
      assert.equal(expired.closeCode, 4401);
    } finally {
      clock.shiftMs -= 16_000;
    }
    const other = open(`language_code=en-IN&token=${encodeURIComponent(bound.body.token)}`);
    await other.closed;
    assert.equal(other.events[0]?.code, 'invalid_request');
    const bad = await api('POST', '/v2/stream-tokens', { body: { ttl_secs: 5 } });
    assert.equal(bad.status, 400);
  });

  test('refusals: no key, bad settings, a language no engine serves, an empty wallet', async () => {
    const poor = await provisionWorkspace(platform.platform.store, {
      name: 'Poor',
      mode: 'sandbox',
      balancePaise: 10,
    });
    const cases: Array<[Session, string, number]> = [
      [open('language_code=en-IN'), 'unauthorized', 4401],
      [withKey('language_code=en-IN', 'sk_live_00000000000000000000000000000000'), 'unauthorized', 4401],
      [withKey('language_code=en-IN&encoding=opus'), 'invalid_request', 4400],
      [withKey('language_code=en-IN&sample_rate=44100'), 'invalid_request', 4400],
      [withKey('language_code=xx-XX'), 'invalid_request', 4400],
      [withKey('language_code=hi-IN'), 'unsupported_language', 4400],
      [withKey('language_code=en-IN', poor.api_key), 'insufficient_balance', 4402],
    ];
    for (const [session, code, close] of cases) {
      await session.closed;
      assert.deepEqual(
        session.events.map((e) => [e.event, e.code]),
        [['error', code]],
      );
      assert.equal(session.closeCode, close, code);
    }
  });

  test('bad frames are errors the session survives; too many end it, billed once', async () => {
    const session = withKey('language_code=en-IN&encoding=pcm16');
    await session.opened;
    session.ws.send('not json');
    session.send({ event: 'dance' });
    session.send({ event: 'audio_input', audio: '***' });
    session.send({ event: 'speech_end' });
    session.ws.send(Buffer.alloc(3));
    await session.until('five errors', () => session.named('error').length === 5);
    assert.ok(session.named('error').every((e) => e.code === 'invalid_frame'));
    for (let i = 0; i < 6; i++) session.ws.send('{');
    await session.closed;
    assert.equal(session.closeCode, 4400);
    assert.equal(session.events.at(-2)?.code, 'too_many_bad_frames');
    assert.equal(session.events.at(-1)?.event, 'session.end');
    assert.equal(session.events.at(-1)?.cost_paise, 0);
  });

  test('at most 20 live sessions per workspace', async () => {
    const busy = await provisionWorkspace(platform.platform.store, {
      name: 'Busy',
      mode: 'sandbox',
      balancePaise: 10_000,
    });
    const sessions = Array.from({ length: 20 }, () => withKey('language_code=en-IN', busy.api_key));
    await Promise.all(sessions.map((s) => s.until('begin', () => s.named('session.begin').length === 1)));
    const extra = withKey('language_code=en-IN', busy.api_key);
    await extra.closed;
    assert.equal(extra.events[0]?.code, 'too_many_sessions');
    assert.equal(extra.closeCode, 4429);
    for (const s of sessions) s.send({ event: 'end' });
    await Promise.all(sessions.map((s) => s.closed));
    const next = withKey('language_code=en-IN', busy.api_key);
    await next.until('begin', () => next.named('session.begin').length === 1);
    next.ws.close();
    await next.closed;
  });
  test('text to speech in every format, streamed, its cost read back equal to the ledger', async () => {
    const text = 'Your appointment is booked for Monday at ten.';
    const bytesPerSecond = { wav: 32_000, pcm16: 32_000, mulaw: 8_000 } as const;
    for (const format of ['wav', 'pcm16', 'mulaw'] as const) {
      const response = await fetch(`${platform.url}/v2/speech`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text, voice_id: 'local-en-female', format }),
      });
      assert.equal(response.status, 200, format);
      const id = response.headers.get('x-speech-id') ?? '';
      assert.match(id, /^sp_[0-9A-Z]{26}$/);
      const audio = Buffer.from(await response.arrayBuffer());
      const header = format === 'wav' ? 44 : 0;
      if (format === 'wav') assert.equal(audio.subarray(0, 4).toString('ascii'), 'RIFF');
      const seconds = (audio.length - header) / bytesPerSecond[format];
      assert.ok(seconds > 1 && seconds < 10, `${format}: ${seconds} s`);

      const readback = await api<{
        characters: number;
        audio_seconds: number;
        cost_paise: number;
        voice_id: string;
      }>('GET', `/v2/speech/${id}`);
      assert.equal(readback.status, 200, readback.text);
      assert.equal(readback.body.characters, text.length);
      assert.equal(readback.body.voice_id, 'local-en-female');
      assert.equal(readback.body.cost_paise, Math.ceil((text.length * 50) / 1000));
      assert.ok(
        Math.abs(readback.body.audio_seconds - seconds) < 0.05,
        `${readback.body.audio_seconds} vs ${seconds}`,
      );
      assert.equal(await ledgerAmount(apiKey, id), -readback.body.cost_paise);
    }
  });

  test('text to speech refusals: another workspace, bad input, an empty wallet', async () => {
    const made = await fetch(`${platform.url}/v2/speech`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Hello.', voice_id: 'local-en-male', format: 'pcm16' }),
    });
    await made.arrayBuffer();
    const id = made.headers.get('x-speech-id') ?? '';
    const other = await provisionWorkspace(platform.platform.store, {
      name: 'Other',
      mode: 'sandbox',
      balancePaise: 0,
    });
    const stranger = client(platform.url, other.api_key);
    assert.equal((await stranger('GET', `/v2/speech/${id}`)).status, 404);
    assert.equal((await api('GET', '/v2/speech/sp_nope')).status, 404);
    const invalid = [
      { text: '', voice_id: 'local-en-male' },
      { text: 'x'.repeat(5001), voice_id: 'local-en-male' },
      { text: 'Hello.', voice_id: 'no-such-voice' },
      { text: 'Hello.', voice_id: 'local-en-male', format: 'mp3' },
      { text: 'Hello.', voice_id: 'local-en-male', format: 'mulaw', sample_rate: 24000 },
    ];
    for (const body of invalid) {
      const refused = await api('POST', '/v2/speech', { body });
      assert.equal(refused.status, 400, JSON.stringify(body).slice(0, 80));
    }
    const poor = await stranger('POST', '/v2/speech', {
      body: { text: 'Hello.', voice_id: 'local-en-male' },
    });
    assert.equal(poor.status, 402, poor.text);
    const voices = await api<{ data: { engine: string; price_per_1000_chars_paise: number }[] }>(
      'GET',
      '/v2/voices',
    );
    const local = voices.body.data.find((v) => v.engine === 'espeak');
    assert.equal(local?.price_per_1000_chars_paise, 50);
  });
  test('a two-channel recording transcribed in one request: a speaker per channel, times, cost equal to the ledger', async () => {
    const first = espeak(PHRASES[0]!);
    const second = espeak(PHRASES[1]!);
    const gap = 16_000 / 2;
    const length = gap + first.length + gap + second.length + gap;
    const left = new Int16Array(length);
    const right = new Int16Array(length);
    left.set(first, gap);
    right.set(second, gap + first.length + gap);
    const wav = writeWav({ sampleRate: 16000, channels: [left, right] });
    const response = await api<{
      id: string;
      status: string;
      duration_secs: number;
      segments: { speaker: string; start_ms: number; end_ms: number; text: string; language: string }[];
      cost_paise: number;
    }>('POST', '/v2/transcriptions/sync?language_code=en-IN', {
      rawBody: wav,
      headers: { 'content-type': 'audio/wav' },
    });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.status, 'completed');
    assert.match(response.body.id, /^trn_/);
    const segments = response.body.segments;
    assert.deepEqual([...new Set(segments.map((s) => s.speaker))], ['speaker_1', 'speaker_2']);
    const firstOf2 = segments.find((s) => s.speaker === 'speaker_2')!;
    assert.ok(
      firstOf2.start_ms >= (gap + first.length + gap) / 16 - 300,
      `speaker_2 starts at ${firstOf2.start_ms}`,
    );
    assert.ok(segments.every((s) => s.end_ms > s.start_ms && s.language === 'en-IN'));
    const heard = segments.map((s) => s.text).join(' ');
    assert.ok(wordOverlap(heard, PHRASES.join(' ')) >= 0.5, `heard "${heard}"`);
    const seconds = Math.ceil(length / 16_000);
    assert.equal(response.body.cost_paise, Math.ceil((seconds * 30) / 60));
    assert.equal(await ledgerAmount(apiKey, response.body.id), -response.body.cost_paise);
  });

  test('a mono recording is degraded and free; bad recordings are refused', async () => {
    const mono = Buffer.from(mulawEncode(concat(new Int16Array(8000), downsample(espeak(PHRASES[0]!)))));
    const response = await api<{ id: string; status: string; cost_paise: number; segments: unknown[] }>(
      'POST',
      '/v2/transcriptions/sync',
      { rawBody: mono, headers: { 'content-type': 'audio/basic' } },
    );
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.status, 'degraded');
    assert.equal(response.body.cost_paise, 0);
    assert.ok(response.body.segments.length > 0);
    assert.equal(await ledgerAmount(apiKey, response.body.id), undefined);
    // Ogg Opus (as a browser's recorder writes it): decoded by libopus, heard like the WAV.
    const codec = new OpusCodec(48_000);
    const upsampler = new Resampler(16000, 48000);
    const spoken = concat(new Int16Array(4800), espeak(PHRASES[0]!), new Int16Array(8000));
    const at48k = concat(upsampler.process(spoken), upsampler.flush());
    const packets: Buffer[] = [];
    for (let at = 0; at + 960 <= at48k.length; at += 960)
      packets.push(codec.encode(at48k.subarray(at, at + 960)));
    const ogg = await api<{ status: string; segments: { text: string }[]; duration_secs: number }>(
      'POST',
      '/v2/transcriptions/sync',
      { rawBody: writeOggOpus(packets, 1), headers: { 'content-type': 'audio/ogg' } },
    );
    assert.equal(ogg.status, 200, ogg.text);
    const heard = ogg.body.segments.map((s) => s.text).join(' ');
    assert.ok(wordOverlap(heard, PHRASES[0]!) >= 0.3, `heard "${heard}" in Ogg Opus`);
    const long = writeWav({ sampleRate: 8000, channels: [new Int16Array(8000 * 61)] });
    for (const [body, type] of [
      [long, 'audio/wav'],
      [Buffer.from('not a wav file'), 'audio/wav'],
      [Buffer.from('{}'), 'application/json'],
    ] as const) {
      const refused = await api('POST', '/v2/transcriptions/sync', {
        rawBody: body,
        headers: { 'content-type': type },
      });
      assert.equal(refused.status, 400, refused.text);
    }
  });

  /** Polls a job until it ends. */
  async function ended(id: string, key = apiKey): Promise<TranscriptionJob> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const job = await client(platform.url, key)<TranscriptionJob>('GET', `/v2/transcriptions/${id}`);
      assert.equal(job.status, 200, job.text);
      if (!['queued', 'running'].includes(job.body.status)) return job.body;
      if (Date.now() > deadline) assert.fail(`job ${id} still ${job.body.status}`);
      await sleep(100);
    }
  }

  test('async jobs: a two-channel upload (multipart) and a mono dialogue from a URL, with speakers, times and cost', async () => {
    const first = espeak(PHRASES[0]!);
    const second = espeak(PHRASES[1]!);
    const gap = 8000;
    const length = gap + first.length + gap + second.length + gap;
    const left = new Int16Array(length);
    const right = new Int16Array(length);
    left.set(first, gap);
    right.set(second, gap + first.length + gap);
    const stereo = writeWav({ sampleRate: 16000, channels: [left, right] });
    const form = new FormData();
    form.append('language_code', 'en-IN');
    form.append('file', new Blob([stereo], { type: 'audio/wav' }), 'call.wav');
    const queued = await fetch(`${platform.url}/v2/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}` },
      body: form,
    });
    const body = (await queued.json()) as TranscriptionJob;
    assert.equal(queued.status, 202, JSON.stringify(body));
    assert.match(body.id, /^trn_[0-9A-Z]{26}$/);
    assert.equal(body.object, 'transcription');
    assert.equal(body.status, 'queued');
    const job = await ended(body.id);
    assert.equal(job.status, 'completed', JSON.stringify(job));
    assert.equal(job.speakers_method, 'channels');
    assert.deepEqual([...new Set(job.segments.map((s) => s.speaker))].sort(), ['speaker_1', 'speaker_2']);
    assert.ok(job.segments.every((s) => s.end_ms > s.start_ms && s.language === 'en-IN'));
    const seconds = Math.ceil(length / 16_000);
    assert.equal(job.duration_secs, Math.round(length / 16) / 1000);
    assert.equal(job.cost_paise, Math.ceil((seconds * 30) / 60));
    assert.equal(await ledgerAmount(apiKey, job.id), -job.cost_paise);

    // A mono dialogue of two voices (eSpeak NG's male and female en-us), fetched from a URL as 8 kHz mu-law WAV.
    const lines = [
      'i want to book an appointment',
      'which day suits you',
      'monday morning please',
      'done, see you monday',
    ];
    const turns = lines.map((line, i) => espeak(line, { voice: i % 2 === 0 ? 'en-us' : 'en-us+f3' }));
    const mono = downsample(
      concat(...turns.flatMap((t) => [new Int16Array(12_800), t]), new Int16Array(8000)),
    );
    const served = await serveOnce(writeWav({ sampleRate: 8000, channels: [mono] }), 'audio/wav');
    try {
      const fromUrl = await api<TranscriptionJob>('POST', '/v2/transcriptions', {
        body: { audio_url: served.url, language_code: 'en-IN' },
      });
      assert.equal(fromUrl.status, 202, fromUrl.text);
      assert.equal(fromUrl.body.duration_secs, null);
      const dialogue = await ended(fromUrl.body.id);
      assert.equal(dialogue.status, 'completed', JSON.stringify(dialogue));
      assert.equal(dialogue.speakers_method, 'voice_clusters');
      assert.equal(dialogue.channels, 1);
      const speakers = dialogue.segments.map((s) => s.speaker);
      assert.deepEqual(
        [...new Set(speakers)].sort(),
        ['speaker_1', 'speaker_2'],
        JSON.stringify(dialogue.segments),
      );
      assert.equal(dialogue.cost_paise, Math.ceil((Math.ceil(mono.length / 8000) * 30) / 60));
      assert.equal(await ledgerAmount(apiKey, dialogue.id), -dialogue.cost_paise);
    } finally {
      await served.close();
    }

    // Listed newest first, with a cursor; deleted: audio and text gone, the charge kept.
    const page = await api<{ data: TranscriptionJob[]; has_more: boolean; next_cursor: string | null }>(
      'GET',
      '/v2/transcriptions?limit=1',
    );
    assert.equal(page.status, 200, page.text);
    assert.equal(page.body.data.length, 1);
    assert.equal(page.body.has_more, true);
    const next = await api<{ data: TranscriptionJob[] }>(
      'GET',
      `/v2/transcriptions?limit=100&cursor=${page.body.next_cursor}`,
    );
    assert.ok(next.body.data.some((t) => t.id === job.id));
    assert.ok(!next.body.data.some((t) => t.id === page.body.data[0]!.id));
    const deleted = await api('DELETE', `/v2/transcriptions/${job.id}`);
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal((await api('GET', `/v2/transcriptions/${job.id}`)).status, 404);
    assert.equal((await api('DELETE', `/v2/transcriptions/${job.id}`)).status, 404);
    assert.equal(
      existsSync(path.join(platform.dataDir, 'transcriptions', speechWorkspaceId, `${job.id}.audio`)),
      false,
    );
    assert.equal(await ledgerAmount(apiKey, job.id), -job.cost_paise);
  });

  test('a failed job is free; another workspace gets 404; bad input is refused', async () => {
    const missing = await serveOnce(Buffer.from('gone'), 'text/plain', 404);
    try {
      const queued = await api<TranscriptionJob>('POST', '/v2/transcriptions', {
        body: { audio_url: missing.url },
      });
      assert.equal(queued.status, 202, queued.text);
      const job = await ended(queued.body.id);
      assert.equal(job.status, 'failed');
      assert.match(job.failure ?? '', /HTTP 404/);
      assert.equal(job.cost_paise, 0);
      assert.equal(await ledgerAmount(apiKey, job.id), undefined);
      const stranger = await provisionWorkspace(platform.platform.store, {
        name: 'Stranger',
        mode: 'sandbox',
        balancePaise: 0,
      });
      const other = client(platform.url, stranger.api_key);
      assert.equal((await other('GET', `/v2/transcriptions/${job.id}`)).status, 404);
      assert.equal((await other('DELETE', `/v2/transcriptions/${job.id}`)).status, 404);
      const theirs = await other<{ data: unknown[] }>('GET', '/v2/transcriptions');
      assert.deepEqual(theirs.body.data, []);
      // An empty wallet cannot queue an upload: 402 before anything is kept.
      const poor = await other('POST', '/v2/transcriptions?language_code=en-IN', {
        rawBody: writeWav({ sampleRate: 8000, channels: [espeakAt8k(PHRASES[0]!)] }),
        headers: { 'content-type': 'audio/wav' },
      });
      assert.equal(poor.status, 402, poor.text);
    } finally {
      await missing.close();
    }
    const mp3 = Buffer.concat([Buffer.from('ID3'), Buffer.alloc(64)]);
    const refusals: Array<[number, Parameters<typeof api>[2]]> = [
      [400, { body: { audio_url: 'ftp://example.com/a.wav' } }],
      [400, { body: { audio_url: 'not a url' } }],
      [400, { body: { audio_url: 'https://example.com/a.wav', language_code: 'xx-XX' } }],
      [400, { body: { audio_url: 'https://example.com/a.wav', extra: 1 } }],
      [400, { rawBody: Buffer.from('not audio'), headers: { 'content-type': 'audio/wav' } }],
      [400, { rawBody: mp3, headers: { 'content-type': 'audio/wav' } }],
      [
        400,
        {
          rawBody: Buffer.from('--x\r\n\r\n'),
          headers: { 'content-type': 'multipart/form-data; boundary=x' },
        },
      ],
      [400, { rawBody: Buffer.from('x'), headers: { 'content-type': 'multipart/form-data' } }],
    ];
    for (const [status, options] of refusals) {
      const refused = await api('POST', '/v2/transcriptions', options);
      assert.equal(refused.status, status, `${JSON.stringify(options).slice(0, 120)}: ${refused.text}`);
    }
    const mp3Refused = await api('POST', '/v2/transcriptions', {
      rawBody: mp3,
      headers: { 'content-type': 'audio/wav' },
    });
    assert.match(mp3Refused.text, /mp3 is not taken/);
    // More than 100 MB is refused from its Content-Length, before the body is read.
    const connection = new RawConnection(platform.url);
    await connection.connected;
    connection.write(
      `POST /v2/transcriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: audio/wav\r\nContent-Length: ${100 * 1024 * 1024 + 64 * 1024 + 1}\r\n\r\nRIFF`,
    );
    const [tooLarge] = await connection.responses(1);
    connection.destroy();
    assert.equal(tooLarge?.status, 413, tooLarge?.text);
    assert.match(tooLarge?.text ?? '', /body_too_large.*104923136-byte limit/);
    assert.equal((await api('GET', '/v2/transcriptions/trn_nope')).status, 404);
    assert.equal((await api('GET', '/v2/transcriptions?limit=0')).status, 400);
  });

  test('a job whose worker died mid-job is taken over when its claim lapses, and billed once', async () => {
    const store = platform.platform.store;
    const workspaceId = speechWorkspaceId;
    const audio = writeWav({ sampleRate: 8000, channels: [espeakAt8k(PHRASES[1]!)] });
    const id = newId('transcription', clock.now());
    await new TranscriptionAudio(path.join(platform.dataDir, 'transcriptions')).save(workspaceId, id, audio);
    // A worker (another node) took the job and died: its claim holds for a minute, so no one else runs it.
    await store.transaction(async (repos) => {
      await repos.transcriptions.create({
        id,
        workspaceId,
        languageCode: 'en-IN',
        source: 'upload',
        audioUrl: null,
        mediaType: 'audio/wav',
        audioBytes: audio.length,
        durationMs: null,
        channels: null,
      });
      assert.ok(await repos.transcriptions.claim(id, 'dead-node', 60_000));
    });
    await sleep(500);
    assert.equal((await api<TranscriptionJob>('GET', `/v2/transcriptions/${id}`)).body.status, 'running');
    clock.shiftMs += 61_000;
    try {
      const job = await ended(id);
      assert.equal(job.status, 'degraded', JSON.stringify(job));
      assert.equal(job.cost_paise, 0);
      assert.ok(job.segments.length > 0);
      const record = await store.transcriptions.get(workspaceId, id, 0);
      assert.equal(record?.attempts, 2);
      // The dead worker comes back and tries to end the job its way: refused, nothing charged.
      const late = await store.transcriptions.finish(id, 'dead-node', {
        status: 'completed',
        durationMs: 1000,
        channels: 1,
        segments: [],
        speakersMethod: 'none',
        failure: null,
        costPaise: 1,
      });
      assert.equal(late, false);
      assert.equal(await ledgerAmount(apiKey, id), undefined);
    } finally {
      clock.shiftMs -= 61_000;
    }
  });

  test('a browser (headless Chromium) streams its microphone with a minted token', {
    skip: chromiumMissing,
  }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'live-stt-browser-'));
    const wav = path.join(dir, 'microphone.wav');
    const spoken = espeak(PHRASES[0]!);
    writeFileSync(
      wav,
      writeWav({
        sampleRate: 16000,
        channels: [concat(new Int16Array(4800), spoken, new Int16Array(48_000))],
      }),
    );
    const browser = await launchChromium(wav);
    try {
      const minted = await api<{ token: string; url: string }>('POST', '/v2/stream-tokens', {
        body: { language_code: 'en-IN' },
      });
      const page = await browser.newPage();
      await page.goto(`${gateway.replace(/^ws/, 'http')}/web/static/index.html`);
      const url = `${minted.body.url}?language_code=en-IN&encoding=pcm16&sample_rate=16000&token=${encodeURIComponent(minted.body.token)}`;
      const captureMs = Math.ceil((4800 + spoken.length) / 16) + 600;
      const events = (await page.evaluate(
        `(${CAPTURE_IN_BROWSER})(${JSON.stringify({ url, captureMs })})`,
      )) as SpeechEvent[];
      assert.equal(events[0]?.event, 'session.begin', JSON.stringify(events));
      assert.equal(events.at(-1)?.event, 'session.end');
      const finals = events.filter((e) => e.event === 'transcript.final');
      assert.equal(finals.length, 1);
      assert.ok(wordOverlap(finals[0]!.text ?? '', PHRASES[0]!) >= 0.3, `heard "${finals[0]!.text}"`);
    } finally {
      await browser.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the API port redirects live speech to text to the gateway, the query kept', async () => {
    const query = 'language_code=en-IN&encoding=mulaw&sample_rate=8000';
    const response = await fetch(`${platform.url}/v1/audio/transcriptions/stream?${query}`, {
      redirect: 'manual',
    });
    assert.equal(response.status, 308);
    assert.equal(response.headers.get('location'), `${gateway}/v1/audio/transcriptions/stream?${query}`);
  });
});

describe('live speech to text on PostgreSQL and Redis: the token claim, the session ceiling and the ledger', {
  skip:
    (!shared && 'PostgreSQL and Redis are not available') ||
    (!SphinxTranscriber.available() && 'PocketSphinx is not installed') ||
    (!espeakInstalled() && 'espeak-ng is not installed'),
}, () => {
  let platform: TestPlatform;
  let key: string;
  const open = (query: string, headers: Record<string, string> = {}): Session =>
    new Session(
      new WebSocket(`${platform.platform.gatewayUrl}/v1/audio/transcriptions/stream?${query}`, { headers }),
    );

  before(async () => {
    platform = await startTestPlatform(shared!, { env: { ROLES: 'api,gateway' } });
    key = (
      await provisionWorkspace(platform.platform.store, { name: 'PG', mode: 'sandbox', balancePaise: 10_000 })
    ).api_key;
  });

  after(async () => {
    await platform?.close();
  });

  test('transcription jobs on PostgreSQL: queued with a hold, deleted free; audio_url through the address guard', async () => {
    const api = client(platform.url, key);
    const wav = writeWav({ sampleRate: 8000, channels: [espeakAt8k(PHRASES[0]!)] });
    const queued = await api<TranscriptionJob>('POST', '/v2/transcriptions', {
      rawBody: wav,
      headers: { 'content-type': 'audio/wav' },
    });
    assert.equal(queued.status, 202, queued.text);
    // No worker runs here: the job waits, its price held.
    assert.equal(
      (await api<TranscriptionJob>('GET', `/v2/transcriptions/${queued.body.id}`)).body.status,
      'queued',
    );
    const before = await api<{ held_paise: number }>('GET', '/v2/wallet');
    assert.ok(before.body.held_paise > 0, before.text);
    assert.equal((await api('DELETE', `/v2/transcriptions/${queued.body.id}`)).status, 200);
    const after = await api<{ held_paise: number }>('GET', '/v2/wallet');
    assert.equal(after.body.held_paise, 0);
    for (const [url, reason] of [
      ['https://127.0.0.1/recording.wav', /internal address/],
      ['https://10.0.0.7/recording.wav', /internal address/],
      ['http://example.com/recording.wav', /https/],
    ] as const) {
      const refused = await api('POST', '/v2/transcriptions', { body: { audio_url: url } });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.text, reason);
    }
  });

  test('a token session billed once in PostgreSQL, the token refused again, 20 sessions at most', async () => {
    const minted = await client(platform.url, key)<{ token: string }>('POST', '/v2/stream-tokens', {
      body: {},
    });
    const query = `language_code=en-IN&encoding=mulaw&sample_rate=8000&token=${encodeURIComponent(minted.body.token)}`;
    const session = open(query);
    await session.opened;
    session.send({ event: 'speech_start' });
    await stream(
      session,
      Buffer.concat([speech(PHRASES[0]!, 'mulaw', 8000), quiet(300, 'mulaw', 8000)]),
      800,
      false,
      8,
    );
    session.send({ event: 'speech_end' });
    session.send({ event: 'end' });
    await session.closed;
    assert.equal(session.named('transcript.final').length, 1);
    const end = session.named('session.end')[0]!;
    assert.ok((end.cost_paise ?? 0) > 0);
    assert.equal(await ledgerEntry(platform.url, key, end.session_id!), -(end.cost_paise ?? 0));
    const again = open(query);
    await again.closed;
    assert.equal(again.events[0]?.code, 'token_reused');

    const bearer = { authorization: `Bearer ${key}` };
    const sessions = Array.from({ length: 20 }, () => open('language_code=en-IN', bearer));
    await Promise.all(sessions.map((s) => s.until('begin', () => s.named('session.begin').length === 1)));
    const extra = open('language_code=en-IN', bearer);
    await extra.closed;
    assert.equal(extra.events[0]?.code, 'too_many_sessions');
    for (const s of sessions) s.ws.close();
    await Promise.all(sessions.map((s) => s.closed));
  });
});
