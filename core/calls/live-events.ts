import type { Coordinator, Unsubscribe } from '../coord/types.ts';
import type { ToolCallEntry } from '../tools/tool-calls.ts';
import type { CallObject } from './representation.ts';

/**
 * What a web call's live event stream carries (`GET /v2/calls/{id}/events`): state changes with the call
 * object, the caller's words as the STT hears them, what the agent said (as heard, after interruptions), the
 * interruption engine's decisions, each turn's latency and each on_call tool run. The gateway running the call publishes them on the
 * coordinator; whichever API node holds the client's stream relays them.
 */
export type LiveCallEvent =
  | { type: 'call.status'; call: CallObject }
  | { type: 'transcript.partial' | 'transcript.final'; text: string }
  /** `recognized` false: the caller spoke but no words were recognised (`text` is empty). */
  | { type: 'caller.turn'; text: string; recognized: boolean; at_ms: number }
  | { type: 'agent.turn'; turn_id: string; text: string; at_ms: number }
  | { type: 'interruption'; decision: string; reason?: string; at_ms: number }
  /** `recognized` false: the turn answered had no words (its `stt_final_ms` is 0: no STT was waited for). */
  | { type: 'latency'; turn_id: string; latency: Record<string, number>; recognized: boolean }
  /** An on_call tool run ended: the entry it added to the call's `tool_calls`. */
  | ({ type: 'tool.call' } & ToolCallEntry);

const channelOf = (callId: string) => `call-events:${callId}`;

export async function publishLiveEvent(
  coord: Coordinator,
  callId: string,
  event: LiveCallEvent,
): Promise<void> {
  await coord.publish(channelOf(callId), JSON.stringify(event));
}

export function onLiveEvents(
  coord: Coordinator,
  callId: string,
  handler: (event: LiveCallEvent) => void,
): Promise<Unsubscribe> {
  return coord.subscribe(channelOf(callId), (message) => {
    try {
      handler(JSON.parse(message) as LiveCallEvent);
    } catch {
      // Not ours: ignored.
    }
  });
}
