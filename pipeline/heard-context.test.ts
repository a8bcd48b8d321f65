/** What the model is told the agent said after a barge-in: exactly what the caller heard, marked as cut off. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatMessage } from '../engines/llm/types.ts';
import { CUT_OFF_MARK, truncateToHeard } from './heard-context.ts';

const user: ChatMessage = { role: 'user', content: 'Where is my order?' };

test('a reply the history holds is cut to the words heard, and marked', () => {
  const history: ChatMessage[] = [
    user,
    { role: 'assistant', content: 'It left on Monday. It arrives Thursday.' },
  ];
  truncateToHeard(history, 1, 'It left on Monday. It');
  assert.deepEqual(history, [user, { role: 'assistant', content: `It left on Monday. It${CUT_OFF_MARK}` }]);
});

test('a reply still being written when the caller cut in is added as heard', () => {
  const history: ChatMessage[] = [user];
  truncateToHeard(history, 1, 'It left on');
  assert.deepEqual(history, [user, { role: 'assistant', content: `It left on${CUT_OFF_MARK}` }]);
});

test('nothing heard: the reply leaves no text behind, but its function calls and results stay', () => {
  const call = { id: 'c1', name: 'pincode_given', arguments: '{"pincode":"380015"}' };
  const history: ChatMessage[] = [
    user,
    { role: 'assistant', content: 'Noting that.', toolCalls: [call] },
    { role: 'tool', toolCallId: 'c1', content: '{"ok":true}' },
    { role: 'assistant', content: 'Your pincode is 380015.' },
  ];
  truncateToHeard(history, 1, '');
  assert.deepEqual(history, [
    user,
    { role: 'assistant', content: '', toolCalls: [call] },
    { role: 'tool', toolCallId: 'c1', content: '{"ok":true}' },
  ]);
});

test('heard text runs across a function call: the first message whole, the second cut', () => {
  const call = { id: 'c1', name: 'pincode_given', arguments: '{}' };
  const history: ChatMessage[] = [
    user,
    { role: 'assistant', content: 'Noting that.', toolCalls: [call] },
    { role: 'tool', toolCallId: 'c1', content: '{"ok":true}' },
    { role: 'assistant', content: 'Your pincode is 380015. Is that right?' },
  ];
  truncateToHeard(history, 1, 'Noting that. Your pincode');
  assert.equal(history[1]?.content, 'Noting that.');
  assert.equal(history[3]?.content, `Your pincode${CUT_OFF_MARK}`);
});

test('everything heard: nothing changes', () => {
  const history: ChatMessage[] = [user, { role: 'assistant', content: 'It arrives Thursday.' }];
  truncateToHeard(history, 1, 'It arrives Thursday.');
  assert.deepEqual(history, [user, { role: 'assistant', content: 'It arrives Thursday.' }]);
});
