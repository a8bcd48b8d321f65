/**
 * Flow agents end to end with real speech: the model moves the flow by calling edge functions, a node with
 * extraction collects a pincode spoken as digits, prompts and the greeting have their `{{variables}}` filled,
 * the call ends on the endCall node; and a barge-in while a transition is under way leaves the flow wholly on
 * one node, the one the model's next request is built from. The model is the OpenAI-compatible provider against
 * a fake server on loopback, scripted below as a model that reads its request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testAgent } from '../core/agents/testing/agents.ts';
import { type AgentSettings, DEFAULT_END_CALL } from '../core/agents/types.ts';
import { validateFlow } from '../core/flows/validate.ts';
import { OpenAiChatModel } from '../engines/llm/providers/openai.ts';
import {
  type ChatBody,
  FakeOpenAiServer,
  type FakeReply,
} from '../engines/llm/testing/fake-openai-server.ts';
import { speech } from './testing/caller-audio.ts';
import { type LocalEngines, localEngines } from './testing/local-engines.ts';
import { CallHarness, ENGINE_WAIT_MS } from './testing/session-harness.ts';

function flowAgent(): AgentSettings {
  const checked = validateFlow(
    {
      nodes: [
        { id: 'g', type: 'globalNode', data: { prompt: 'You are Asha from Acme, speaking to {{name}}.' } },
        {
          id: 'start',
          type: 'startCall',
          data: {
            greeting: 'Hello {{name}}, this is Asha from Acme. What is your pincode?',
            prompt: 'Ask for the pincode.',
            extraction_enabled: true,
            extraction_variables: [{ name: 'pincode', type: 'string', prompt: 'the six-digit pincode' }],
          },
        },
        { id: 'confirm', type: 'agentNode', data: { prompt: 'Confirm that the pincode is {{pincode}}.' } },
        { id: 'bye', type: 'endCall', data: { prompt: 'Thank {{name}} and say goodbye.' } },
      ],
      edges: [
        {
          id: 'e1',
          source: 'start',
          target: 'confirm',
          data: { label: 'pincode_given', condition: 'The caller gave their pincode' },
        },
        {
          id: 'e2',
          source: 'confirm',
          target: 'bye',
          data: { label: 'confirmed', condition: 'The caller confirmed the pincode' },
        },
      ],
    },
    [],
  );
  assert.ok(checked.ok);
  return testAgent({ flow: checked.flow, end_call: { ...DEFAULT_END_CALL, enabled: false } });
}

/** Slow writing, for the first reply of its kind only (a barge-in lands in it; the replies after it are quick). */
interface Pacing {
  /** Words a second of a text said before the pincode function call (none when absent). */
  noteTokensPerSecond?: number;
  /** Words a second of the confirmation. */
  confirmTokensPerSecond?: number;
}

const NOTE = 'Let me note that down for you. One moment please, I am typing it into our system right now.';

/** A model that reads its request: calls the edge the caller's words fit, else speaks for the node it is on. */
function flowModel(pacing: Pacing) {
  let notes = 0;
  let confirmations = 0;
  return (body: ChatBody): FakeReply => {
    const messages = body.messages ?? [];
    const tools = (body.tools ?? []).map((t) => t.function.name);
    const last = messages.at(-1);
    const said = last?.role === 'user' ? String(last.content) : '';
    const digits = said.replace(/\D/g, '');
    if (tools.includes('pincode_given') && digits.length === 6) {
      const call = { name: 'pincode_given', arguments: JSON.stringify({ pincode: digits }) };
      if (pacing.noteTokensPerSecond === undefined || notes++ > 0) return { toolCalls: [call] };
      return { text: NOTE, toolCalls: [call], tokensPerSecond: pacing.noteTokensPerSecond };
    }
    if (tools.includes('confirmed') && /\b(yes|correct)\b/i.test(said)) {
      return { toolCalls: [{ name: 'confirmed', arguments: '{}' }] };
    }
    if (tools.includes('end_call')) {
      return { text: 'Thank you, goodbye.', toolCalls: [{ name: 'end_call', arguments: '{}' }] };
    }
    const pincode = /pincode is (\d{6})/.exec(String(messages[0]?.content))?.[1];
    if (!pincode) return { text: 'Could you tell me your pincode?' };
    const text = `I have your pincode as ${pincode.split('').join(' ')}. Is that correct? Please say yes or no.`;
    const slow = pacing.confirmTokensPerSecond !== undefined && confirmations++ === 0;
    return slow ? { text, tokensPerSecond: pacing.confirmTokensPerSecond } : { text };
  };
}

const toolsOf = (body: ChatBody | undefined) => (body?.tools ?? []).map((t) => t.function.name);

describe('flow agents with real speech', () => {
  let engines: LocalEngines;
  before(async () => {
    engines = await localEngines();
  });
  after(() => engines.close());

  async function startCall(pacing: Pacing) {
    const llm = await FakeOpenAiServer.start({ reply: flowModel(pacing) });
    const call = new CallHarness({
      agent: flowAgent(),
      stt: engines.sttServer,
      engines: {
        llm: new OpenAiChatModel({ baseURL: llm.baseURL, apiKey: 'test', model: 'fake-model' }),
        stt: engines.stt,
        vad: engines.vad,
        speaker: engines.tts,
      },
    }).start();
    assert.ok(await call.until(() => call.spoke('t1'), ENGINE_WAIT_MS), call.log());
    return { llm, call };
  }

  test('edges move the flow, the spoken pincode is extracted, variables are filled, endCall hangs up', async () => {
    const { llm, call } = await startCall({});
    try {
      const pincode = 'My pincode is 3 8 0 0 1 5.';
      await call.say(await speech(engines.tts, pincode), pincode);
      assert.ok(await call.until(() => call.all('agent_turn').length >= 2, ENGINE_WAIT_MS), call.log());
      const yes = 'Yes, that is correct.';
      await call.say(await speech(engines.tts, yes), yes);
      assert.ok(await call.until(() => call.carrier.ended !== undefined, ENGINE_WAIT_MS), call.log());
      const outcome = await call.session.finished;

      assert.equal(outcome.reason, 'assistant-ended-call');
      assert.deepEqual(outcome.extracted, { pincode: '380015' });
      assert.deepEqual(
        call.all('transition').map(({ event }) => [event.from, event.to, event.label, event.extracted]),
        [
          ['start', 'confirm', 'pincode_given', { pincode: '380015' }],
          ['confirm', 'bye', 'confirmed', {}],
        ],
      );
      const system = llm.requests.map((r) => String(r.body?.messages?.[0]?.content));
      assert.equal(system[0], 'You are Asha from Acme, speaking to Ravi.\n\nAsk for the pincode.');
      assert.ok(
        system.some((s) => s.endsWith('Confirm that the pincode is 380015.')),
        system.join(' | '),
      );
      assert.ok(system.at(-1)?.endsWith('Thank Ravi and say goodbye.'), system.at(-1));
      assert.deepEqual(
        outcome.transcript.map((t) => [t.speaker, t.node ?? '', t.text]),
        [
          ['agent', 'start', 'Hello Ravi, this is Asha from Acme. What is your pincode?'],
          ['caller', '', pincode],
          ['agent', 'start', 'I have your pincode as 3 8 0 0 1 5. Is that correct? Please say yes or no.'],
          ['caller', '', yes],
          ['agent', 'confirm', 'Thank you, goodbye.'],
        ],
      );
    } finally {
      await llm.close();
    }
  });

  for (const when of ['before the edge function arrives', 'after the transition was applied'] as const) {
    test(`a barge-in ${when} leaves the flow wholly on one node`, async () => {
      const before = when === 'before the edge function arrives';
      // Before: a slow model still writing its note when the caller cuts in, the function call still to come.
      // After: the function is called at once, and the confirmation is still playing when the caller cuts in.
      const { llm, call } = await startCall(
        before ? { noteTokensPerSecond: 3 } : { confirmTokensPerSecond: 6 },
      );
      try {
        const pincode = 'My pincode is 3 8 0 0 1 5.';
        await call.say(await speech(engines.tts, pincode), pincode);
        const playing = () => (call.carrier.turns.get('t2')?.samples ?? 0) >= 1000 * 16;
        assert.ok(await call.until(playing, ENGINE_WAIT_MS), call.log());
        const correction = 'Sorry, that is wrong, my pincode is 3 8 0 0 1 6.';
        await call.say(await speech(engines.tts, correction), correction);
        const asked = () => llm.requests.some((r) => r.body?.messages?.at(-1)?.content === correction);
        assert.ok(await call.until(asked, ENGINE_WAIT_MS), call.log());
        assert.ok(
          call.first('interruption', (e) => e.event.type === 'interrupted'),
          call.log(),
        );

        // The request built after the barge-in: its node, functions and history must agree with the flow.
        const next = llm.requests.find((r) => r.body?.messages?.at(-1)?.content === correction)!.body!;
        const correctionAt = call.events.findIndex(
          (e) => e.event.type === 'caller_turn' && e.event.text === correction,
        );
        const moved = call.events
          .slice(0, correctionAt)
          .flatMap((e) => (e.event.type === 'transition' ? [e.event] : []));
        const toolMessages = (next.messages ?? []).filter((m) => m.role === 'tool' || m.tool_calls?.length);
        const system = String(next.messages?.[0]?.content);
        if (before) {
          assert.equal(moved.length, 0, call.log());
          assert.deepEqual(toolsOf(next), ['pincode_given']);
          assert.match(system, /Ask for the pincode\.$/);
          assert.equal(toolMessages.length, 0, 'no half-done function call in the history');
        } else {
          assert.deepEqual(
            moved.map((event) => [event.from, event.to, event.extracted]),
            [['start', 'confirm', { pincode: '380015' }]],
          );
          assert.deepEqual(toolsOf(next), ['confirmed']);
          assert.match(system, /Confirm that the pincode is 380015\.$/);
          assert.equal(toolMessages.length, 2, 'the call and its result');
        }
        // The flow goes on from there: from the start node the corrected pincode is taken; on the confirm node
        // the model asks again.
        const settled = () => call.all('agent_turn').length >= 2 && call.all('transition').length >= 1;
        assert.ok(await call.until(settled, ENGINE_WAIT_MS), call.log());
        call.session.stopped();
        const outcome = await call.session.finished;
        assert.deepEqual(outcome.extracted, { pincode: before ? '380016' : '380015' });
        const cut = outcome.transcript.find((t) => t.interrupted);
        assert.equal(cut?.speaker, 'agent');
      } finally {
        await llm.close();
      }
    });
  }
});
