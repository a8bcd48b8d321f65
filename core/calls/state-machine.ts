import { CALL_STATUSES, type CallStatus } from '../store/call-types.ts';

/**
 * The call state machine of the interface ("States and transitions / Call status") as data. Pure: no I/O.
 *
 * Every change of a call's status is one of these triggers; the store applies it as one conditional UPDATE
 * (`... WHERE status IN (from)`), so of two triggers that race only the first can apply. Admission
 * (`(none) -> queued`) is not a trigger: it inserts the call.
 *
 * Ended reasons written by default (the interface names the first four; the others follow their pattern):
 * | trigger            | to          | ended_reason              |
 * |--------------------|-------------|---------------------------|
 * | `assistant_hangup` | completed   | `assistant-ended-call`    |
 * | `customer_hangup`  | completed   | `customer-ended-call`     |
 * | `voicemail`        | voicemail   | `voicemail`               |
 * | `ring_timeout`     | no_answer   | `customer-did-not-answer` |
 * | `busy`             | busy        | `customer-busy`           |
 * | `pipeline_error`   | failed      | `pipeline-error`          |
 * | `max_duration`     | timeout     | `exceeded-max-duration`   |
 * | `abort`            | aborted     | `aborted-by-api`          |
 * | `node_shutdown`    | failed      | `node-shutdown`           |
 *
 * `pipeline_error` also applies to a queued call: a call that cannot be dialled at all (its agent was deleted,
 * the carrier refused it) ends `failed` rather than staying queued for ever. `node_shutdown` ends the calls a
 * gateway still runs when its drain window after SIGTERM/SIGINT runs out: failed, free, named for what it was.
 */
export type CallEventType =
  | 'call.queued'
  | 'call.started'
  | 'call.completed'
  | 'call.voicemail'
  | 'call.failed'
  | 'call.aborted';

export type TerminalStatus = Exclude<CallStatus, 'queued' | 'dialing' | 'in_progress'>;

export interface Transition {
  readonly from: readonly CallStatus[];
  readonly to: CallStatus;
  /** The event written with the change; null when the change is not announced (dialing). */
  readonly event: CallEventType | null;
  /** `ended_reason` written by default; null for changes that do not end the call. */
  readonly endedReason: string | null;
}

export const CALL_TRANSITIONS = {
  dial: { from: ['queued'], to: 'dialing', event: null, endedReason: null },
  answer: { from: ['dialing'], to: 'in_progress', event: 'call.started', endedReason: null },
  assistant_hangup: {
    from: ['in_progress'],
    to: 'completed',
    event: 'call.completed',
    endedReason: 'assistant-ended-call',
  },
  customer_hangup: {
    from: ['in_progress'],
    to: 'completed',
    event: 'call.completed',
    endedReason: 'customer-ended-call',
  },
  voicemail: {
    from: ['dialing', 'in_progress'],
    to: 'voicemail',
    event: 'call.voicemail',
    endedReason: 'voicemail',
  },
  ring_timeout: {
    from: ['dialing'],
    to: 'no_answer',
    event: 'call.failed',
    endedReason: 'customer-did-not-answer',
  },
  busy: { from: ['dialing'], to: 'busy', event: 'call.failed', endedReason: 'customer-busy' },
  pipeline_error: {
    from: ['queued', 'dialing', 'in_progress'],
    to: 'failed',
    event: 'call.failed',
    endedReason: 'pipeline-error',
  },
  max_duration: {
    from: ['in_progress'],
    to: 'timeout',
    event: 'call.failed',
    endedReason: 'exceeded-max-duration',
  },
  abort: {
    from: ['queued', 'dialing', 'in_progress'],
    to: 'aborted',
    event: 'call.aborted',
    endedReason: 'aborted-by-api',
  },
  node_shutdown: {
    from: ['dialing', 'in_progress'],
    to: 'failed',
    event: 'call.failed',
    endedReason: 'node-shutdown',
  },
} as const satisfies Record<string, Transition>;

export type CallTrigger = keyof typeof CALL_TRANSITIONS;
/** The triggers that end a call: what `settle` takes. */
export type EndTrigger = Exclude<CallTrigger, 'dial' | 'answer'>;

export const CALL_TRIGGERS = Object.keys(CALL_TRANSITIONS) as CallTrigger[];
export const END_TRIGGERS = CALL_TRIGGERS.filter((t): t is EndTrigger => t !== 'dial' && t !== 'answer');

const TERMINAL: ReadonlySet<CallStatus> = new Set<CallStatus>([
  'completed',
  'voicemail',
  'no_answer',
  'busy',
  'failed',
  'timeout',
  'aborted',
]);

export function isTerminal(status: CallStatus): status is TerminalStatus {
  return TERMINAL.has(status);
}

export function isEndTrigger(trigger: CallTrigger): trigger is EndTrigger {
  return isTerminal(CALL_TRANSITIONS[trigger].to);
}

/** The one terminal event of a call that ended in `status` (interface "v2 call webhooks"). */
export function terminalEventType(status: TerminalStatus): CallEventType {
  switch (status) {
    case 'completed':
      return 'call.completed';
    case 'voicemail':
      return 'call.voicemail';
    case 'aborted':
      return 'call.aborted';
    case 'no_answer':
    case 'busy':
    case 'failed':
    case 'timeout':
      return 'call.failed';
  }
}

/** The transition `trigger` makes from `status`, or undefined when it does not apply there. */
export function nextTransition(status: CallStatus, trigger: CallTrigger): Transition | undefined {
  const transition: Transition = CALL_TRANSITIONS[trigger];
  return transition.from.includes(status) ? transition : undefined;
}

/**
 * Whether the time media was live is billed when the call ends in `status`: completed, voicemail (the
 * interface: billed for the seconds media was live) and timeout. Aborted calls are never billed; failed calls
 * are the platform's fault and free; calls that never connected (no answer, busy) had no media.
 */
export function billsMedia(status: TerminalStatus): boolean {
  return status === 'completed' || status === 'voicemail' || status === 'timeout';
}

export { CALL_STATUSES };
