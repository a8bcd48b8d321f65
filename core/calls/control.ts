import type { Coordinator, Unsubscribe } from '../coord/types.ts';

/**
 * Commands for a call that is running somewhere else: the API node that accepted an abort does not host the
 * call's media or its ringing. Every gateway and worker node subscribes; the one hosting the call acts, the
 * others ignore the message.
 */
export type CallCommand =
  | {
      type: 'hangup';
      workspaceId: string;
      callId: string;
      /** The carrier and its call id, for a node that must stop the ringing. */
      carrier: string | null;
      carrierCallId: string | null;
    }
  | { type: 'control'; workspaceId: string; callId: string; control: LiveControl };

/** Live control of a web call in progress (`POST /v2/calls/{id}/control`). */
export type LiveControl =
  /** The agent says this now, in place of whatever it was saying or preparing. */
  | { action: 'say'; text: string }
  /** The agent says `message` (if any), then hangs up. */
  | { action: 'end_call'; message?: string }
  /** Muted, the agent listens (the conversation goes on being recorded) but does not speak. */
  | { action: 'mute' }
  | { action: 'unmute' }
  /** A message added to the conversation the model sees from its next reply on. */
  | { action: 'add_message'; role: 'system' | 'user' | 'assistant'; content: string };

const CHANNEL = 'calls:control';

export async function sendCallCommand(coord: Coordinator, command: CallCommand): Promise<void> {
  await coord.publish(CHANNEL, JSON.stringify(command));
}

export function onCallCommand(
  coord: Coordinator,
  handler: (command: CallCommand) => void,
): Promise<Unsubscribe> {
  return coord.subscribe(CHANNEL, (message) => {
    let command: CallCommand;
    try {
      command = JSON.parse(message) as CallCommand;
    } catch {
      return;
    }
    if ((command?.type === 'hangup' || command?.type === 'control') && typeof command.callId === 'string')
      handler(command);
  });
}

/** Published after a call was admitted, so dialers look at the queue now instead of at their next poll. */
export const CALLS_QUEUED_CHANNEL = 'calls:queued';

export function announceQueued(coord: Coordinator): () => void {
  return () => {
    coord.publish(CALLS_QUEUED_CHANNEL, '').catch(() => {});
  };
}
