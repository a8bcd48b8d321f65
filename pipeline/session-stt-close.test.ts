/**
 * A call's streaming STT connection ends the way the provider's protocol asks when the call ends: against a fake
 * Deepgram server on loopback, a hang-up sends `CloseStream` and the connection closes normally (1000), not
 * dropped (1006) with the provider billing an idle tail.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { ScriptedDialogModel } from '../engines/llm/providers/scripted.ts';
import { DeepgramTranscriber } from '../engines/stt/providers/deepgram.ts';
import { FakeDeepgramServer } from '../engines/stt/testing/fake-deepgram-server.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

let engines: LocalEngines;
let deepgram: FakeDeepgramServer;
before(async () => {
  engines = await localEngines();
  deepgram = await FakeDeepgramServer.start({ transcripts: [''] });
});
after(async () => {
  await deepgram.close();
  await engines.close();
});

for (const [ending, hangUp] of [
  ['the caller hangs up', (call: CallHarness) => call.session.stopped()],
  ['the agent hangs up', (call: CallHarness) => call.session.hangUp()],
] as const) {
  test(`when ${ending}, the Deepgram stream gets CloseStream and closes normally`, async () => {
    const before = deepgram.connections.length;
    const call = new CallHarness({
      agent: testAgent(),
      voicemail: false,
      engines: {
        llm: new ScriptedDialogModel(),
        stt: new DeepgramTranscriber({ baseUrl: deepgram.baseUrl }),
        vad: engines.vad,
        speaker: engines.tts,
      },
    }).start();
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    const connection = deepgram.connections[before];
    assert.ok(connection && connection.audioMs > 0);
    hangUp(call);
    await call.session.finished;
    await deepgram.until(() => !connection.open);
    assert.deepEqual(
      connection.controls.filter((c) => c !== 'KeepAlive'),
      ['CloseStream'],
    );
    assert.equal(connection.closeCode, 1000);
  });
}
