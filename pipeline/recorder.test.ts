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

test('a long call is written a block at a time and reads back sample for sample', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'recorder-'));
  try {
    const file = path.join(dir, 'call.wav');
    const r = new CallRecorder(file);
    const seconds = 23;
    for (let i = 0; i < seconds * 50; i++) {
      r.caller(new Int16Array(320).map((_, s) => ((i * 320 + s) % 30_000) - 15_000));
      if (i % 100 === 10) r.agent(new Int16Array(8_000).fill(i)); // half a second of agent every 2 s
    }
    assert.equal(r.finish(), seconds * 1000);
    const [caller, agent] = readWav(readFileSync(file)).channels as [Int16Array, Int16Array];
    assert.equal(caller.length, seconds * 16000);
    for (let s = 0; s < caller.length; s += 997)
      assert.equal(caller[s], (s % 30_000) - 15_000, `caller sample ${s}`);
    for (let i = 10; i < seconds * 50; i += 100) {
      const from = (i + 1) * 320;
      assert.equal(agent[from - 1], 0, `silence before the agent at frame ${i}`);
      assert.equal(agent[from], i);
      assert.equal(agent[from + 7_999], i);
      assert.equal(agent[from + 8_000], 0);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
