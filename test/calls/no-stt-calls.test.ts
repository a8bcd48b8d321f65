/**
 * A fresh machine without PocketSphinx, black box: `voiceagent serve` started as `npm start` starts it, with its
 * PATH pointed where no speech-to-text engine is. The start banner and `GET /healthz` say that calls take turns
 * by voice activity alone; README's walkthrough agent (`hi-IN`) and an `en-IN` agent complete sandbox calls,
 * billed per second, with the callee's turns kept as unrecognised speech; and each caller turn's times are
 * checked against the call's recording: it starts within 100 ms of where the callee's voice does.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { readWav } from '../../codecs/index.ts';
import { client } from '../support/platform.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/voiceagent.js');
const TERMINAL = new Set(['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'timeout', 'aborted']);
/** How far a caller turn's start may lie from the callee's voice in the recording. */
const TOLERANCE_MS = 100;

interface CallBody {
  id: string;
  status: string;
  ended_reason: string | null;
  duration_secs: number;
  cost: { amount_inr: number; per_min_inr: number };
}

interface Turn {
  speaker: string;
  text: string;
  start_ms: number;
  end_ms: number;
  recognized?: boolean;
}

/** The node's stdout until `pattern` shows up in it. */
async function waitForOutput(
  child: ChildProcess,
  output: string[],
  pattern: RegExp,
): Promise<RegExpExecArray> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = pattern.exec(output.join(''));
    if (found) return found;
    if (child.exitCode !== null) assert.fail(`voiceagent exited (${child.exitCode}):\n${output.join('')}`);
    if (Date.now() > deadline) assert.fail(`no ${pattern} in:\n${output.join('')}`);
    await sleep(100);
  }
}

/**
 * Where the voice starts in a channel (ms): 20 ms frames louder than the noise floor, after at least 300 ms of
 * quiet. Voices in the sandbox are eSpeak's, over G.711: speech frames are far above the threshold.
 */
function voiceOnsets(samples: Int16Array, sampleRate: number): number[] {
  const frame = sampleRate / 50;
  const onsets: number[] = [];
  let quietFrames = Number.POSITIVE_INFINITY;
  for (let at = 0; at + frame <= samples.length; at += frame) {
    let energy = 0;
    for (let i = at; i < at + frame; i++) energy += (samples[i] as number) ** 2;
    const loud = Math.sqrt(energy / frame) > 300;
    if (loud && quietFrames >= 15) onsets.push((at / sampleRate) * 1000);
    quietFrames = loud ? 0 : quietFrames + 1;
  }
  return onsets;
}

describe('calls on a machine without a speech-to-text engine', () => {
  let child: ChildProcess;
  const output: string[] = [];
  let dataDir: string;
  let api: ReturnType<typeof client>;
  let url: string;
  let key: string;

  before(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'voiceagent-nostt-'));
    const emptyPath = path.join(dataDir, 'bin');
    child = spawn(process.execPath, [BIN, 'serve'], {
      // The embedded defaults, as `npm start` on a fresh machine: none of the suite's PostgreSQL or Redis settings,
      // whose stores may hold workspaces already (then nothing is created on first start).
      env: {
        // No pocketsphinx_continuous on the PATH and no model where PocketSphinx keeps it (which the resident
        // decoder built by npm ci loads): as on a machine where it was never installed.
        PATH: emptyPath,
        SPHINX_MODEL_DIR: path.join(dataDir, 'no-model'),
        HOST: '127.0.0.1',
        PORT: '0',
        GATEWAY_PORT: '0',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        STT_PROVIDER: 'auto',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    key = (await waitForOutput(child, output, /API key \(shown once; also in [^)]*\): (\S+)/))[1] ?? '';
    url = (await waitForOutput(child, output, /Control API: (\S+)/))[1] ?? '';
    api = client(url, key);
  });

  after(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the start banner and /healthz say every language runs on turn-taking by voice activity', async () => {
    assert.match(
      output.join(''),
      /Speech to text: no engine installed; every call runs on turn-taking by voice activity/,
    );
    const health = await api<{ engines: { speech_to_text: Record<string, unknown> } }>('GET', '/healthz');
    assert.equal(health.status, 200, health.text);
    const speech = health.body.engines.speech_to_text;
    assert.equal(speech.stt, 'none');
    assert.deepEqual(speech.words, []);
    assert.ok((speech.turn_taking_only as string[]).includes('hi-IN'), health.text);
    assert.ok((speech.turn_taking_only as string[]).includes('en-IN'), health.text);
  });

  async function ended(id: string): Promise<CallBody> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const { body } = await api<CallBody>('GET', `/v2/calls/${id}`);
      if (TERMINAL.has(body.status)) return body;
      if (Date.now() > deadline) assert.fail(`call ${id} stayed ${body.status}`);
      await sleep(250);
    }
  }

  async function conversation(agent: Record<string, unknown>): Promise<{ call: CallBody; turns: Turn[] }> {
    const created = await api<{ id: string }>('POST', '/v2/agents', { body: agent });
    assert.equal(created.status, 201, created.text);
    const placed = await api<CallBody>('POST', '/v2/calls', {
      body: { agent_id: created.body.id, to: '+919876543219', variables: { name: 'Ravi' } },
    });
    assert.equal(placed.status, 202, placed.text);
    const call = await ended(placed.body.id);
    const transcript = await api<{ turns: Turn[] }>('GET', `/v2/calls/${call.id}/transcript`);
    assert.equal(transcript.status, 200, transcript.text);
    return { call, turns: transcript.body.turns };
  }

  function assertCompletedAndBilled(call: CallBody): void {
    assert.equal(call.status, 'completed', JSON.stringify(call));
    assert.ok(call.duration_secs > 3, `duration ${call.duration_secs}`);
    assert.equal(
      call.cost.amount_inr,
      Math.ceil((call.duration_secs * call.cost.per_min_inr * 100) / 60) / 100,
    );
    assert.ok(call.cost.amount_inr > 0);
  }

  function assertUnrecognisedCallerTurns(turns: Turn[]): Turn[] {
    const caller = turns.filter((t) => t.speaker === 'caller');
    assert.ok(caller.length >= 2, JSON.stringify(turns));
    for (const turn of caller) {
      assert.deepEqual([turn.text, turn.recognized], ['', false], JSON.stringify(turn));
      assert.ok(turn.end_ms > turn.start_ms, JSON.stringify(turn));
    }
    // The agent answered them: its opening and a reply to each (the last may be cut by the callee hanging up).
    assert.ok(turns.filter((t) => t.speaker === 'agent').length >= caller.length, JSON.stringify(turns));
    return caller;
  }

  test("README's walkthrough agent (hi-IN) completes a call, billed, the callee's turns kept as unrecognised speech", async () => {
    const { call, turns } = await conversation({
      name: 'Support',
      language: 'hi-IN',
      first_message: 'Namaste {{name}}!',
    });
    assertCompletedAndBilled(call);
    // Its opening, then an acknowledgement per turn (no system prompt: nothing to quote). A callee kept waiting
    // 5 s by a slow first synthesis speaks first, and the opening gives way to the answer.
    const agentLines = turns.filter((t) => t.speaker === 'agent').map((t) => t.text);
    assert.ok(
      agentLines.length > 0 && agentLines.every((text) => text === 'Namaste Ravi!' || text === 'Okay.'),
      JSON.stringify(turns),
    );
    assertUnrecognisedCallerTurns(turns);
  });

  test('an en-IN agent completes a call; each caller turn starts within 100 ms of its voice in the recording', async () => {
    const { call, turns } = await conversation({
      name: 'Asha',
      language: 'en-IN',
      system_prompt: 'You are Asha from Acme, calling {{name}} about their order.',
      first_message: 'Hello {{name}}, this is Asha from Acme.',
    });
    assertCompletedAndBilled(call);
    const caller = assertUnrecognisedCallerTurns(turns);

    const link = await fetch(`${url}/v2/calls/${call.id}/recording`, {
      headers: { authorization: `Bearer ${key}` },
      redirect: 'manual',
    });
    assert.equal(link.status, 302);
    const location = link.headers.get('location') ?? '';
    const wav = readWav(new Uint8Array(await (await fetch(location)).arrayBuffer()));
    const onsets = voiceOnsets(wav.channels[0] as Int16Array, wav.sampleRate);
    for (const turn of caller) {
      const nearest = Math.min(...onsets.map((onset) => Math.abs(onset - turn.start_ms)));
      assert.ok(
        nearest <= TOLERANCE_MS,
        `caller turn at ${turn.start_ms} ms; voice onsets at ${onsets.join(', ')}`,
      );
    }
  });
});
