/**
 * The call state machine against the interface's table, written out here independently: every status x every
 * trigger, the terminal event of every terminal status, and the billing rule of each ending.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CallStatus } from '../store/call-types.ts';
import {
  billsMedia,
  CALL_STATUSES,
  CALL_TRIGGERS,
  type CallTrigger,
  END_TRIGGERS,
  isEndTrigger,
  isTerminal,
  nextTransition,
  type TerminalStatus,
  terminalEventType,
} from './state-machine.ts';

/** [from, trigger] -> [to, event, ended_reason]; every pair not listed must be refused. */
const SPEC: Record<string, [CallStatus, string | null, string | null]> = {
  'queued dial': ['dialing', null, null],
  'dialing answer': ['in_progress', 'call.started', null],
  'in_progress assistant_hangup': ['completed', 'call.completed', 'assistant-ended-call'],
  'in_progress customer_hangup': ['completed', 'call.completed', 'customer-ended-call'],
  'dialing voicemail': ['voicemail', 'call.voicemail', 'voicemail'],
  'in_progress voicemail': ['voicemail', 'call.voicemail', 'voicemail'],
  'dialing ring_timeout': ['no_answer', 'call.failed', 'customer-did-not-answer'],
  'dialing busy': ['busy', 'call.failed', 'customer-busy'],
  'queued pipeline_error': ['failed', 'call.failed', 'pipeline-error'],
  'dialing pipeline_error': ['failed', 'call.failed', 'pipeline-error'],
  'in_progress pipeline_error': ['failed', 'call.failed', 'pipeline-error'],
  'in_progress max_duration': ['timeout', 'call.failed', 'exceeded-max-duration'],
  'queued abort': ['aborted', 'call.aborted', 'aborted-by-api'],
  'dialing abort': ['aborted', 'call.aborted', 'aborted-by-api'],
  'in_progress abort': ['aborted', 'call.aborted', 'aborted-by-api'],
  'dialing node_shutdown': ['failed', 'call.failed', 'node-shutdown'],
  'in_progress node_shutdown': ['failed', 'call.failed', 'node-shutdown'],
};

const TERMINALS: TerminalStatus[] = [
  'completed',
  'voicemail',
  'no_answer',
  'busy',
  'failed',
  'timeout',
  'aborted',
];

describe('call state machine', () => {
  it('knows the ten statuses and eleven triggers', () => {
    assert.equal(CALL_STATUSES.length, 10);
    assert.deepEqual([...CALL_TRIGGERS].sort(), [
      'abort',
      'answer',
      'assistant_hangup',
      'busy',
      'customer_hangup',
      'dial',
      'max_duration',
      'node_shutdown',
      'pipeline_error',
      'ring_timeout',
      'voicemail',
    ]);
  });

  for (const status of CALL_STATUSES) {
    for (const trigger of CALL_TRIGGERS) {
      const expected = SPEC[`${status} ${trigger}`];
      it(`${status} + ${trigger} -> ${expected ? expected[0] : 'refused'}`, () => {
        const transition = nextTransition(status, trigger);
        if (!expected) {
          assert.equal(transition, undefined);
          return;
        }
        assert.ok(transition);
        assert.deepEqual([transition.to, transition.event, transition.endedReason], expected);
      });
    }
  }

  it('no trigger leaves an ended call (exactly one ending per call)', () => {
    for (const status of TERMINALS) {
      for (const trigger of CALL_TRIGGERS) assert.equal(nextTransition(status, trigger), undefined);
    }
  });

  it('isTerminal holds for exactly the seven ended statuses', () => {
    for (const status of CALL_STATUSES) {
      assert.equal(isTerminal(status), (TERMINALS as string[]).includes(status), status);
    }
  });

  it('the terminal event of each ending matches the table and the interface', () => {
    assert.deepEqual(Object.fromEntries(TERMINALS.map((s) => [s, terminalEventType(s)])), {
      completed: 'call.completed',
      voicemail: 'call.voicemail',
      no_answer: 'call.failed',
      busy: 'call.failed',
      failed: 'call.failed',
      timeout: 'call.failed',
      aborted: 'call.aborted',
    });
    for (const trigger of END_TRIGGERS) {
      const transition = nextTransition((SPEC_FROM[trigger] ?? 'queued') as CallStatus, trigger);
      assert.ok(transition && isTerminal(transition.to));
      assert.equal(transition.event, terminalEventType(transition.to as TerminalStatus), trigger);
    }
  });

  it('end triggers are exactly the triggers that reach a terminal status', () => {
    for (const trigger of CALL_TRIGGERS) {
      assert.equal(isEndTrigger(trigger), (END_TRIGGERS as CallTrigger[]).includes(trigger), trigger);
    }
    assert.deepEqual(
      CALL_TRIGGERS.filter((t) => !isEndTrigger(t)),
      ['dial', 'answer'],
    );
  });

  it('bills media for completed, voicemail and timeout only', () => {
    assert.deepEqual(
      TERMINALS.filter((s) => billsMedia(s)),
      ['completed', 'voicemail', 'timeout'],
    );
  });
});

/** One state each end trigger applies in, taken from SPEC. */
const SPEC_FROM: Partial<Record<CallTrigger, string>> = Object.fromEntries(
  Object.keys(SPEC).map((key) => {
    const [from, trigger] = key.split(' ');
    return [trigger, from];
  }),
);
