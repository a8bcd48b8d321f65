/**
 * The scripted dialog engine: first message, edge matching by word overlap (English and Hinglish), goodbye ->
 * end_call, the node acknowledgement, argument extraction, pacing, and determinism.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { collectReply } from './collect.ts';
import {
  decide,
  firstMessageLine,
  type ScriptedDecision,
  ScriptedDialogModel,
} from './providers/scripted.ts';
import { extractArguments } from './providers/scripted-extraction.ts';
import { contentWords, firstSentence, isFarewell, overlapScore, stem } from './providers/scripted-words.ts';
import type { ChatMessage, ChatRequest, FunctionSpec } from './types.ts';
import { UNRECOGNIZED_SPEECH } from './unrecognized-speech.ts';

const NODE_PROMPT = 'Ask whether the caller wants to book a visit. Keep it short.';
const fn = (name: string, description: string, parameters: Record<string, unknown> = {}): FunctionSpec => ({
  name,
  description,
  parameters: { type: 'object', properties: {}, ...parameters },
});
const EDGES: FunctionSpec[] = [
  fn('book_visit', 'The caller agrees to book an appointment'),
  fn('not_interested', 'The caller is not interested or says no'),
  fn('callback_later', 'The caller asks to be called back later'),
  fn('end_call', 'End the call'),
];

function afterGreeting(
  said: string,
  functions: FunctionSpec[] = EDGES,
  extra: ChatMessage[] = [],
): ChatRequest {
  return {
    messages: [
      {
        role: 'system',
        content: `${NODE_PROMPT}\n${firstMessageLine('Hello, this is Asha from City Clinic.')}`,
      },
      { role: 'assistant', content: 'Hello, this is Asha from City Clinic.' },
      ...extra,
      { role: 'user', content: said },
    ],
    functions,
  };
}
const called = (decision: ScriptedDecision): string | undefined =>
  decision.kind === 'call' ? decision.name : undefined;

describe('words and scores', () => {
  test('lower-cases, strips punctuation and stop-words, canonicalises yes/no/thanks, keeps Devanagari whole', () => {
    assert.deepEqual(contentWords("Haan ji, I don't want that!"), ['yes', 'no']);
    assert.deepEqual(contentWords('Booking appointments, BOOKED.'), ['book', 'appointment', 'book']);
    assert.deepEqual(contentWords('मुझे अपॉइंटमेंट चाहिए'), ['मुझे', 'अपॉइंटमेंट', 'चाहिए']);
    assert.equal(stem('agreed'), stem('agrees'));
    assert.equal(stem('yes'), 'yes');
  });

  test('the overlap score is a cosine in [0, 1], and yes never fits a no-only condition', () => {
    assert.equal(overlapScore(['book', 'appointment'], ['book', 'appointment']), 1);
    assert.equal(overlapScore(['yes'], ['no', 'interest']), 0);
    fc.assert(
      fc.property(fc.array(fc.string()), fc.array(fc.string()), (a, b) => {
        const score = overlapScore(a, b);
        return score >= 0 && score <= 1 && score === overlapScore(b, a);
      }),
    );
  });

  test('farewells: goodbye words with at most one other content word', () => {
    for (const said of [
      'bye',
      'Ok thank you, bye!',
      'Dhanyavaad ji',
      'alvida',
      'bas',
      'thanks for the information',
    ])
      assert.equal(isFarewell(said), true, said);
    for (const said of ['thanks, I want to book an appointment tomorrow', 'call me later', 'hello'])
      assert.equal(isFarewell(said), false, said);
  });

  test('first sentence ends at . ! ? or a danda', () => {
    assert.equal(firstSentence('Ask for the date.  Then confirm.'), 'Ask for the date.');
    assert.equal(firstSentence('तारीख पूछिए। फिर पुष्टि करें।'), 'तारीख पूछिए।');
    assert.equal(firstSentence('No full stop here'), 'No full stop here');
  });
});

describe('decisions', () => {
  test('speaks the first message when no assistant turn exists yet, and only then', () => {
    const opening: ChatRequest = {
      messages: [
        { role: 'system', content: 'You are Asha.' },
        {
          role: 'system',
          content: `${NODE_PROMPT}\n${firstMessageLine('  Namaste!\n Main Asha bol rahi hoon. ')}`,
        },
      ],
    };
    assert.deepEqual(decide(opening), { kind: 'say', text: 'Namaste! Main Asha bol rahi hoon.' });
    assert.deepEqual(decide(afterGreeting('hmm')), {
      kind: 'say',
      text: `Okay. ${firstSentence(NODE_PROMPT)}`,
    });
  });

  test('takes the edge whose condition fits the caller best', () => {
    assert.equal(called(decide(afterGreeting('Yes, please book an appointment for me'))), 'book_visit');
    assert.equal(called(decide(afterGreeting('No, I am not interested'))), 'not_interested');
    assert.equal(called(decide(afterGreeting('nahi'))), 'not_interested');
    assert.equal(called(decide(afterGreeting('Can you call me back later?'))), 'callback_later');
    assert.equal(called(decide(afterGreeting('haan ji, appointment book kar dijiye'))), 'book_visit');
  });

  test('with no fitting condition, acknowledges with the first sentence of the last system message', () => {
    const decision = decide(afterGreeting('What colour is the sky on Mars?'));
    assert.deepEqual(decision, { kind: 'say', text: 'Okay. Ask whether the caller wants to book a visit.' });
  });

  test('goodbye words call end_call when it is offered, and never otherwise', () => {
    assert.deepEqual(decide(afterGreeting('ok thank you, bye')), {
      kind: 'call',
      name: 'end_call',
      arguments: {},
    });
    assert.equal(called(decide(afterGreeting('dhanyavaad'))), 'end_call');
    const withoutEndCall = EDGES.filter((f) => f.name !== 'end_call');
    assert.equal(decide(afterGreeting('bye', withoutEndCall)).kind, 'say');
    assert.equal(called(decide(afterGreeting('thanks, I agree to book an appointment'))), 'book_visit');
    // end_call is reached by goodbye words only, never by overlap with its description.
    assert.equal(called(decide(afterGreeting('end the call', [EDGES[0]!, EDGES[3]!]))), undefined);
  });

  test('unrecognised speech takes the first edge, with nothing extracted; with no edge it acknowledges', () => {
    assert.deepEqual(decide(afterGreeting(UNRECOGNIZED_SPEECH)), {
      kind: 'call',
      name: 'book_visit',
      arguments: {},
    });
    const onlyEndCall = [EDGES[3]!];
    assert.deepEqual(decide(afterGreeting(UNRECOGNIZED_SPEECH, onlyEndCall)), {
      kind: 'say',
      text: 'Okay. Ask whether the caller wants to book a visit.',
    });
  });

  test('after a tool result it acknowledges the new node instead of calling again', () => {
    const request = afterGreeting('Yes, book an appointment');
    request.messages.push(
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'book_visit', arguments: '{}' }] },
      { role: 'tool', content: 'moved', toolCallId: 'c1' },
      { role: 'system', content: 'Ask for the preferred date. Offer mornings first.' },
    );
    assert.deepEqual(decide(request), { kind: 'say', text: 'Okay. Ask for the preferred date.' });
  });

  test('fills the arguments it can find', () => {
    const parameters = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        phone: { type: 'string' },
        guests: { type: 'integer' },
        slot: { enum: ['morning', 'evening'] },
        consent: { type: 'boolean' },
        notes: { type: 'string' },
        city: { type: 'string' },
      },
      required: ['notes'],
    };
    const said = 'Yes, my name is Ravi Kumar and my number is 98765 43210, 3 guests in the evening';
    assert.deepEqual(extractArguments(parameters, said), {
      name: 'Ravi Kumar',
      phone: '9876543210',
      guests: 3,
      slot: 'evening',
      consent: true,
      notes: said,
    });
    assert.deepEqual(extractArguments(parameters, 'mera naam Priya hai'), {
      name: 'Priya',
      notes: 'mera naam Priya hai',
    });
    const phoneOnly = 'reach me on +91-98765-43210';
    assert.deepEqual(extractArguments(parameters, phoneOnly), { phone: '+919876543210', notes: phoneOnly });
    const save = fn('save_name', "Record the caller's name", parameters);
    const decision = decide(afterGreeting('My name is Ravi', [save]));
    assert.equal(called(decision), 'save_name');
  });

  test('is deterministic and only ever calls an offered function', () => {
    fc.assert(
      fc.property(fc.string(), fc.subarray(EDGES), (said, functions) => {
        const request = afterGreeting(said, functions);
        const first = decide(request);
        assert.deepEqual(decide(structuredClone(request)), first);
        if (first.kind === 'call') assert.ok(functions.some((f) => f.name === first.name));
      }),
    );
  });
});

describe('ScriptedDialogModel', () => {
  test('streams word by word with the configured pace, then done with word counts', async () => {
    const model = new ScriptedDialogModel({ tokenDelayMs: 1, firstTokenDelayMs: 1 });
    const reply = await collectReply(model.chat(afterGreeting('What colour is the sky?')));
    const texts = reply.events.filter((e) => e.type === 'text').map((e) => e.text);
    assert.deepEqual(texts, [
      'Okay.',
      ' Ask',
      ' whether',
      ' the',
      ' caller',
      ' wants',
      ' to',
      ' book',
      ' a',
      ' visit.',
    ]);
    assert.equal(reply.finishReason, 'stop');
    assert.equal(reply.usage?.completionTokens, texts.length);
    assert.ok((reply.usage?.promptTokens ?? 0) > 0);
  });

  test('a tool call comes with finish reason tool_calls and a deterministic id', async () => {
    const model = new ScriptedDialogModel();
    const request = afterGreeting('no, not interested');
    const first = await collectReply(model.chat(request));
    const second = await collectReply(model.chat(request));
    assert.deepEqual(first.toolCalls, [{ id: 'call_scripted_3', name: 'not_interested', arguments: '{}' }]);
    assert.deepEqual(second.events, first.events);
    assert.equal(first.finishReason, 'tool_calls');
  });

  test('is a scripted engine, not a language model', () => {
    const model = new ScriptedDialogModel();
    assert.equal(model.provider, 'scripted');
    assert.equal(model.model, 'scripted-dialog');
  });
});
