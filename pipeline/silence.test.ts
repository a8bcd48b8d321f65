import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { validateFlow } from '../core/flows/validate.ts';
import {
  repromptLine,
  type SilenceSettings,
  SilenceWatch,
  silenceGoodbyeLine,
  silenceSettings,
} from './silence.ts';

const settings: SilenceSettings = { repromptMs: 2000, message: '', maxReprompts: 2 };

describe('SilenceWatch', () => {
  test('re-prompts after the silence, counts from each playout end, and ends after the unanswered ones', () => {
    const watch = new SilenceWatch();
    watch.agentDone(1000);
    assert.equal(watch.due(2980, settings, 0), null);
    assert.equal(watch.due(3000, settings, 0), 'reprompt');
    watch.agentDone(4000);
    assert.equal(watch.due(5990, settings, 0), null);
    assert.equal(watch.due(6000, settings, 0), 'reprompt');
    watch.agentDone(7000);
    assert.equal(watch.due(9000, settings, 0), 'end');
  });

  test('caller speech restarts the count and clears the unanswered re-prompts', () => {
    const watch = new SilenceWatch();
    assert.equal(watch.due(2000, settings, 0), 'reprompt');
    watch.agentDone(3000);
    assert.equal(watch.due(5000, settings, 0), 'reprompt');
    watch.callerSpeaking(5500);
    // The speech ended at 6000 (the turn taking's quiet-since); silence counts from there.
    assert.equal(watch.due(7990, settings, 6000), null);
    assert.equal(watch.due(8000, settings, 6000), 'reprompt');
    watch.agentDone(9000);
    assert.equal(watch.due(11_000, settings, 6000), 'reprompt');
    watch.agentDone(12_000);
    assert.equal(watch.due(14_000, settings, 6000), 'end');
  });

  test('0 turns re-prompts off; 0 unanswered re-prompts never ends the call', () => {
    const off = new SilenceWatch();
    assert.equal(off.due(60_000, { ...settings, repromptMs: 0 }, 0), null);
    const patient = new SilenceWatch();
    for (let i = 1; i <= 5; i++)
      assert.equal(patient.due(i * 2000, { ...settings, maxReprompts: 0 }, 0), 'reprompt');
  });
});

describe('silence settings and lines', () => {
  test("a flow node's own settings win over the agent's", () => {
    const checked = validateFlow(
      {
        nodes: [
          { id: 's', type: 'startCall', data: { greeting: 'Hi', silence_reprompt_secs: 0 } },
          { id: 'a', type: 'agentNode', data: { silence_reprompt_message: 'Hello?' } },
        ],
        edges: [
          { id: 'e', source: 's', target: 'a', data: { label: 'go', condition: 'The caller is ready' } },
        ],
      },
      [],
    );
    assert.ok(checked.ok);
    const agent = testAgent({ flow: checked.flow });
    const [start, ask] = checked.flow.nodes;
    assert.deepEqual(silenceSettings(agent, start?.data), { repromptMs: 0, message: '', maxReprompts: 2 });
    assert.deepEqual(silenceSettings(agent, ask?.data), {
      repromptMs: 6000,
      message: 'Hello?',
      maxReprompts: 2,
    });
  });

  test('lines follow the voice language, English for the rest; a message of its own wins', () => {
    assert.equal(repromptLine(settings, 'hi-IN'), 'क्या आप अभी भी लाइन पर हैं?');
    assert.equal(repromptLine(settings, 'fr-FR'), 'Are you still there?');
    assert.equal(repromptLine({ ...settings, message: 'Hello?' }, 'hi-IN'), 'Hello?');
    assert.match(silenceGoodbyeLine('en-IN'), /Goodbye\.$/);
  });
});
