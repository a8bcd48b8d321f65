/**
 * A web call end to end in a real browser: the API places a `channel: "web"` call and answers with what a
 * browser needs to join; headless Chromium opens the gateway's demo page with those, speaking into a fake
 * microphone (a WAV file); the test follows the call's live event stream (Server-Sent Events), steers the agent
 * with live control (say a line, end the call with a goodbye), and reads the transcript. Phone calls refuse
 * both with `unsupported_channel`. Skipped when Chromium or PocketSphinx is not installed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import { writeWav } from '../../codecs/index.ts';
import { provisionWorkspace } from '../../core/workspaces/provision.ts';
import { SphinxTranscriber } from '../../engines/stt/index.ts';
import { createTextToSpeech } from '../../engines/tts/index.ts';
import { chromiumMissing, launchChromium } from '../../gateway/testing/chromium.ts';
import { backends, client, errorCode, startTestPlatform, type TestPlatform } from '../support/platform.ts';

const [embedded] = await backends();

interface LiveEvent {
  type: string;
  text?: string;
  call?: { status: string; ended_reason: string | null };
}

/** Reads a Server-Sent Events response into `events` until it ends. */
async function follow(response: Response, events: LiveEvent[]): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = block.split('\n').find((line) => line.startsWith('data: '));
      if (data) events.push(JSON.parse(data.slice(6)) as LiveEvent);
      end = buffered.indexOf('\n\n');
    }
  }
}

async function until(
  what: string,
  check: () => boolean,
  timeoutMs = 45_000,
  detail?: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}${detail ? `: ${detail()}` : ''}`);
    await sleep(100);
  }
}

/** Polls the call over the API until it has `status`; fails naming the last status seen. */
async function statusBecomes(
  api: ReturnType<typeof client>,
  id: string,
  status: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let seen: string | undefined;
  while (seen !== status) {
    if (Date.now() > deadline) assert.fail(`call ${id} is ${seen}, not ${status}`);
    await sleep(100);
    seen = (await api<{ status: string }>('GET', `/v2/calls/${id}`)).body.status;
  }
}

describe('a web call from the demo page in headless Chromium', {
  skip: chromiumMissing || (!SphinxTranscriber.available() && 'PocketSphinx is not installed'),
}, () => {
  let platform: TestPlatform;
  let browser: Browser;
  let api: ReturnType<typeof client>;
  let apiKey: string;
  let agentId: string;
  let dir: string;

  before(async () => {
    platform = await startTestPlatform(embedded!, { env: { ROLES: 'api,gateway,worker' } });
    const workspace = await provisionWorkspace(platform.platform.store, {
      name: 'Web',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    apiKey = workspace.api_key;
    api = client(platform.url, apiKey);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: {
        name: 'Asha',
        system_prompt: 'You are Asha from Acme, helping {{name}}.',
        first_message: 'Hello {{name}}, this is Asha.',
        voice: { voice_id: 'local-en-female' },
        max_duration_secs: 120,
      },
    });
    assert.equal(agent.status, 201, agent.text);
    agentId = agent.body.id;

    // The caller's microphone: silence while the agent opens, one sentence, silence (Chromium loops the file).
    const voices = createTextToSpeech({ espeak: true });
    const chunks: Int16Array[] = [];
    for await (const chunk of voices.synthesize({
      voiceId: 'local-en-male',
      text: 'I would like to know about my order.',
      language: 'en-IN',
    }))
      chunks.push(chunk);
    await voices.close();
    const speech = new Int16Array(16_000 * 5 + chunks.reduce((n, c) => n + c.length, 0) + 16_000 * 12);
    let offset = 16_000 * 5;
    for (const chunk of chunks) {
      speech.set(chunk, offset);
      offset += chunk.length;
    }
    dir = mkdtempSync(path.join(tmpdir(), 'web-call-'));
    const wav = path.join(dir, 'caller.wav');
    writeFileSync(wav, writeWav({ sampleRate: 16000, channels: [speech] }));
    browser = await launchChromium(wav);
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('join, hear the agent, steer it live, end it, read the transcript', async () => {
    const created = await api<{ id: string; status: string; web: { url: string; page_url: string } }>(
      'POST',
      '/v2/calls',
      { body: { channel: 'web', agent_id: agentId, variables: { name: 'Ravi' } } },
    );
    assert.equal(created.status, 202, created.text);
    assert.equal(created.body.status, 'queued');
    assert.match(created.body.web.url, /^ws:\/\/.+\/web\/call_[0-9A-Z]{26}\?token=/);
    const id = created.body.id;

    const events: LiveEvent[] = [];
    const stream = await fetch(`${platform.url}/v2/calls/${id}/events`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
    const followed = follow(stream, events);

    const early = await api('POST', `/v2/calls/${id}/control`, { body: { action: 'say', text: 'Hi' } });
    assert.equal(early.status, 409, 'control waits for the call to be live');

    // page_url joins by itself; processing=0 keeps the browser's noise suppression off the fake microphone.
    const page = await browser.newPage();
    await page.goto(`${created.body.web.page_url}&processing=0`);

    const agentSaid = () => events.filter((e) => e.type === 'agent.turn').map((e) => e.text);
    await until('the call to go live', () => events.some((e) => e.call?.status === 'in_progress'));
    await until(
      'the opening line',
      () => agentSaid().includes('Hello Ravi, this is Asha.'),
      45_000,
      () => JSON.stringify(events),
    );
    await until('the caller to be heard', () => events.some((e) => e.type === 'caller.turn'));
    await page.waitForFunction("document.querySelector('#turns .turn.caller') !== null", undefined, {
      timeout: 10_000,
    });

    const say = await api('POST', `/v2/calls/${id}/control`, {
      body: { action: 'say', text: 'One moment please.' },
    });
    assert.equal(say.status, 202, say.text);
    await until('the line said on request', () => agentSaid().includes('One moment please.'));

    const end = await api('POST', `/v2/calls/${id}/control`, {
      body: { action: 'end_call', message: 'Goodbye for now.' },
    });
    assert.equal(end.status, 202, end.text);
    await followed;
    const last = events.at(-1);
    assert.equal(last?.type, 'call.status');
    assert.equal(last?.call?.status, 'completed');
    assert.equal(last?.call?.ended_reason, 'assistant-ended-call');
    assert.ok(agentSaid().includes('Goodbye for now.'));
    await page.waitForFunction("document.querySelector('#state')?.textContent === 'Ended'", undefined, {
      timeout: 10_000,
    });
    assert.equal(await page.textContent('#notice'), 'This call has ended: the agent hung up.');
    const pageAgentLines = await page.$$eval('#turns .turn.agent', (items) =>
      items.map((item) => item.childNodes[1]?.textContent),
    );
    assert.ok(pageAgentLines.includes('Goodbye for now.'), pageAgentLines.join(' | '));
    await page.close();

    const transcript = await api<{ turns: Array<{ speaker: string; text: string }> }>(
      'GET',
      `/v2/calls/${id}/transcript`,
    );
    assert.equal(transcript.status, 200);
    const agentTurns = transcript.body.turns.filter((t) => t.speaker === 'agent').map((t) => t.text);
    assert.ok(agentTurns.includes('Hello Ravi, this is Asha.'), agentTurns.join(' | '));
    assert.ok(agentTurns.includes('One moment please.'));
    assert.ok(transcript.body.turns.some((t) => t.speaker === 'caller'));
    const call = await api<{ status: string; duration_secs: number; cost: { amount_inr: number } }>(
      'GET',
      `/v2/calls/${id}`,
    );
    assert.equal(call.body.status, 'completed');
    assert.ok(call.body.cost.amount_inr > 0, 'web calls are billed like phone calls');
  });

  test('page_url joins without a click and shows the conversation as it happens, at phone width', async () => {
    const created = await api<{ id: string; web: { page_url: string } }>('POST', '/v2/calls', {
      body: { channel: 'web', agent_id: agentId, variables: { name: 'Meera' } },
    });
    assert.equal(created.status, 202, created.text);
    const id = created.body.id;
    assert.match(created.body.web.page_url, /[?&]autostart=1(&|$)/);

    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    await page.goto(created.body.web.page_url);
    await statusBecomes(api, id, 'in_progress', 20_000);
    await page.waitForFunction("document.querySelector('#state')?.textContent === 'In call'", undefined, {
      timeout: 10_000,
    });
    await page.waitForFunction(
      "[...document.querySelectorAll('#turns .turn.agent')].some((t) => t.textContent.includes('Hello Meera, this is Asha.'))",
      undefined,
      { timeout: 45_000 },
    );
    const overflow = (await page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    )) as number;
    assert.equal(overflow, 0, 'nothing runs off the page at phone width');

    await page.click('#hangup');
    await page.waitForFunction("document.querySelector('#state')?.textContent === 'Ended'", undefined, {
      timeout: 10_000,
    });
    assert.equal(await page.textContent('#notice'), 'This call has ended: you hung up.');
    await statusBecomes(api, id, 'completed', 20_000);
    await page.close();
    assert.deepEqual(errors, []);
  });

  test('live control and live events of a phone call answer 400 unsupported_channel', async () => {
    const phone = await api<{ id: string }>('POST', '/v2/calls', {
      body: { to: '+919876543211', agent_id: agentId },
    });
    assert.equal(phone.status, 202);
    const control = await api('POST', `/v2/calls/${phone.body.id}/control`, { body: { action: 'mute' } });
    assert.equal(control.status, 400);
    assert.equal(errorCode(control), 'unsupported_channel');
    const live = await api('GET', `/v2/calls/${phone.body.id}/events`);
    assert.equal(live.status, 400);
    assert.equal(errorCode(live), 'unsupported_channel');
    const bad = await api('POST', `/v2/calls/${phone.body.id}/control`, { body: { action: 'dance' } });
    assert.equal(bad.status, 400);
    assert.equal(errorCode(bad), 'invalid_request');
  });
});

describe('a web call nobody joins', () => {
  /** Short join window, and a short lease: the waiting call's slot must be renewed to outlive it. */
  const JOIN_WINDOW_MS = 12_000;
  let platform: TestPlatform;
  let api: ReturnType<typeof client>;
  let agentId: string;
  let browser: Browser | undefined;
  let dir: string;

  before(async () => {
    platform = await startTestPlatform(embedded!, {
      env: {
        ROLES: 'api,gateway,worker',
        WEB_CALL_JOIN_MS: String(JOIN_WINDOW_MS),
        LIVE_CALL_LEASE_MS: '3000',
      },
    });
    const workspace = await provisionWorkspace(platform.platform.store, {
      name: 'Unjoined',
      mode: 'sandbox',
      balancePaise: 100_000,
    });
    api = client(platform.url, workspace.api_key);
    const agent = await api<{ id: string }>('POST', '/v2/agents', {
      body: { name: 'Asha', first_message: 'Hello, this is Asha.', voice: { voice_id: 'local-en-female' } },
    });
    assert.equal(agent.status, 201, agent.text);
    agentId = agent.body.id;
    if (!chromiumMissing) {
      dir = mkdtempSync(path.join(tmpdir(), 'web-call-unjoined-'));
      const wav = path.join(dir, 'silence.wav');
      writeFileSync(wav, writeWav({ sampleRate: 16000, channels: [new Int16Array(16_000)] }));
      browser = await launchChromium(wav);
    }
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  interface CallView {
    id: string;
    status: string;
    ended_reason: string | null;
    created_at: string;
    ended_at: string | null;
    cost: { amount_inr: number };
  }

  test('waits in dialing until its token expires, then ends no_answer; its page says so', async () => {
    const created = await api<CallView & { web: { expires_at: string; page_url: string } }>(
      'POST',
      '/v2/calls',
      { body: { channel: 'web', agent_id: agentId } },
    );
    assert.equal(created.status, 202, created.text);
    const { id, web } = created.body;
    const expiresAt = Date.parse(web.expires_at);
    assert.equal(
      expiresAt - Date.parse(created.body.created_at),
      JOIN_WINDOW_MS,
      'the token lives the window',
    );

    // Recovery sweeps every second here (a third of the lease): many sweeps see the call wait.
    const seen: Array<{ at: number; status: string }> = [];
    let call: CallView;
    for (;;) {
      call = (await api<CallView>('GET', `/v2/calls/${id}`)).body;
      seen.push({ at: Date.now(), status: call.status });
      if (!['queued', 'dialing'].includes(call.status)) break;
      if (Date.now() > expiresAt + 20_000) assert.fail(`still ${call.status} long after its token expired`);
      await sleep(250);
    }
    const before = seen.filter((s) => s.at < expiresAt).map((s) => s.status);
    assert.ok(before.includes('dialing'), 'it waited in dialing');
    assert.deepEqual(
      [...new Set(before)].filter((s) => s !== 'queued' && s !== 'dialing'),
      [],
      'until expiry',
    );
    assert.equal(call.status, 'no_answer', JSON.stringify(call));
    assert.equal(call.ended_reason, 'customer-did-not-answer');
    assert.ok(Date.parse(call.ended_at ?? '') > expiresAt, 'not before its token expired');
    assert.equal(call.cost.amount_inr, 0);

    if (!browser) return;
    const page = await browser.newPage();
    await page.goto(web.page_url);
    await page.waitForFunction("document.querySelector('#state')?.textContent === 'Ended'", undefined, {
      timeout: 10_000,
    });
    assert.equal(
      await page.textContent('#notice'),
      'This call has ended: nobody joined it before its link expired.',
    );
    await page.close();
  });

  test('the page of a call cancelled before anyone joined says so', { skip: chromiumMissing }, async () => {
    const created = await api<{ id: string; web: { page_url: string } }>('POST', '/v2/calls', {
      body: { channel: 'web', agent_id: agentId },
    });
    assert.equal(created.status, 202, created.text);
    const aborted = await api('POST', `/v2/calls/${created.body.id}/abort`);
    assert.equal(aborted.status, 200, aborted.text);
    const page = await browser!.newPage();
    await page.goto(created.body.web.page_url);
    await page.waitForFunction("document.querySelector('#state')?.textContent === 'Ended'", undefined, {
      timeout: 10_000,
    });
    assert.equal(await page.textContent('#notice'), 'This call has ended: it was cancelled.');
    await page.close();
  });
});
