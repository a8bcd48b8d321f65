import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readWav } from '../codecs/index.ts';
import { CallRecorder } from './recorder.ts';

const frame = (value: number) => new Int16Array(320).fill(value);

test('two channels in call time: caller left, agent right after what is playing, cut on barge-in', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'recorder-'));
  try {
    const file = path.join(dir, 'call.wav');
    const r = new CallRecorder(file);
    for (let i = 0; i < 50; i++) r.caller(frame(100)); // 1 s of caller
    r.agent(new Int16Array(16_000).fill(200)); // 1 s of agent, plays 1.0-2.0 s
    r.agent(new Int16Array(8_000).fill(300)); // plays 2.0-2.5 s
    for (let i = 0; i < 50; i++) r.caller(frame(0)); // 1-2 s
    r.cutAgentAfter(1000, 600); // the caller interrupted after hearing 600 ms
    for (let i = 0; i < 250; i++) r.caller(frame(5)); // 2-7 s: past the in-memory window
    assert.equal(r.finish(), 7000);
    const wav = readWav(readFileSync(file));
    assert.equal(wav.sampleRate, 16000);
    const [caller, agent] = wav.channels as [Int16Array, Int16Array];
    assert.equal(caller.length, 7 * 16000);
    assert.equal(caller[100], 100);
    assert.equal(caller[16_000 + 5], 0);
    assert.equal(agent[15_999], 0, 'agent silent while the caller spoke first');
    assert.equal(agent[16_000], 200);
    assert.equal(agent[16_000 + 9_599], 200, 'heard part kept');
    assert.equal(agent[16_000 + 9_600], 0, 'unheard part silenced');
    assert.equal(agent[32_000 + 10], 0, 'the queued sentence never played');
    assert.equal(caller[6 * 16000], 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
