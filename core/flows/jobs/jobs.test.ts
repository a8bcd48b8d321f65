import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateFlow } from '../validate.ts';
import { structuralFindings, variablesRead } from './graph.ts';
import { jsonObjectIn } from './models.ts';
import { costPaise, emptyUsage, hostedMicroPaise } from './pricing.ts';
import { mostDifferentFirst, tidyTranscript } from './transcripts.ts';

test('transcripts are tidied to one AGENT:/CALLER: turn per line', () => {
  assert.equal(
    tidyTranscript('Agent:  Hello\n\nuser: hi\nthere\nCustomer: a table\nBOT: sure'),
    'AGENT: Hello\nCALLER: hi there a table\nAGENT: sure',
  );
  assert.equal(tidyTranscript('no speaker at all'), '');
});

test('example calls are picked most different first', () => {
  const calls = [
    'CALLER: table for two at eight',
    'CALLER: table for two at nine',
    'CALLER: parking and a kids menu please',
  ];
  assert.equal(mostDifferentFirst(calls, 3)[0], 2);
  assert.deepEqual([...mostDifferentFirst(calls, 3)].sort(), [0, 1, 2]);
  assert.equal(mostDifferentFirst(calls, 1).length, 1);
});

test('the cost rule: simulated turns at the text rates, hosted answers at cost × 88 × 1.2, rounded up once', () => {
  // 0.00001 USD → 0.10560 paise: 105,600 millionths.
  assert.equal(hostedMicroPaise({ promptTokens: 1, completionTokens: 1, cost: 0.00001 }, [0, 0]), 105_600);
  // No cost reported: 1,000 in at 1 USD/M and 200 out at 2 USD/M = 0.0014 USD.
  assert.equal(hostedMicroPaise({ promptTokens: 1000, completionTokens: 200 }, [1, 2]), 14_784_000);
  const usage = { ...emptyUsage(), simulated_input: 1_000_000, simulated_output: 1 };
  // ₹14.38 for a million input tokens, plus 0.005752 paise: rounded up to the next paisa.
  assert.equal(costPaise(usage), 1_439);
  assert.equal(costPaise(emptyUsage()), 0);
});

test('a model answer’s JSON is found in a fenced block or among words', () => {
  assert.deepEqual(jsonObjectIn('Here:\n```json\n{"a": 1}\n```'), { a: 1 });
  assert.deepEqual(jsonObjectIn('sure {"b": [1]} done'), { b: [1] });
  assert.equal(jsonObjectIn('no json'), undefined);
});

test('variables read and shape problems seen without a model', () => {
  const checked = validateFlow(
    {
      nodes: [
        { id: 's', type: 'startCall', data: { greeting: 'Hi {{name}}', prompt: 'Ask for {{ city }}' } },
        {
          id: 'a',
          type: 'agentNode',
          data: {
            prompt: 'Confirm {{pin}}',
            extraction_enabled: true,
            extraction_variables: [{ name: 'pin', type: 'string', prompt: 'pincode' }],
          },
        },
      ],
      edges: [{ id: 'e', source: 's', target: 'a', data: { label: 'go', condition: 'ready' } }],
    },
    [],
  );
  assert.ok(checked.ok);
  assert.deepEqual(variablesRead(checked.flow), ['city', 'name']);
  const findings = structuralFindings(checked.flow);
  assert.equal(findings.length, 2, 'no endCall, and a dead end at a');
  assert.equal(findings[1]?.node, 'a');
});
