import { Endpointer, type TurnEnd } from '../endpointing.ts';
import { type InterruptionEvent, InterruptionPolicy, type InterruptionSettings } from '../interruption.ts';
import { inOrder, type Step } from './script.ts';

/** Runs a script through an InterruptionPolicy; every event, in order. */
export function playInterruption(
  settings: InterruptionSettings,
  steps: readonly Step[],
): InterruptionEvent[] {
  const policy = new InterruptionPolicy(settings);
  const events: InterruptionEvent[] = [];
  for (const step of inOrder(steps)) {
    switch (step.kind) {
      case 'vad':
        events.push(...policy.onVad(step.event));
        break;
      case 'partial':
        events.push(...policy.onTranscript({ type: 'partial', text: step.text }, step.atMs));
        break;
      case 'final':
        events.push(
          ...policy.onTranscript({ type: 'final', text: step.text, endOfTurn: step.endOfTurn }, step.atMs),
        );
        break;
      case 'agent_start':
        events.push(...policy.agentStarted(step.atMs, { interruptible: step.interruptible }));
        break;
      case 'agent_stop':
        events.push(...policy.agentStopped(step.atMs));
        break;
      case 'tick':
        events.push(...policy.tick(step.atMs));
        break;
      case 'voiced':
        events.push(...policy.voiced(step.atMs));
        break;
      case 'turn_taken':
        events.push(...policy.tick(step.atMs));
        policy.callerTurnTaken();
        break;
    }
  }
  return events;
}

/** Runs a script through an Endpointer (agent steps do not concern it); every turn end, in order. */
export function playEndpointer(endpointingMs: number, steps: readonly Step[]): TurnEnd[] {
  const endpointer = new Endpointer({ endpointingMs });
  const events: TurnEnd[] = [];
  // As TurnTaking does: voiced windows reach the endpointer only inside the VAD's speech.
  let inSpeech = false;
  for (const step of inOrder(steps)) {
    let event: TurnEnd | null = null;
    if (step.kind === 'vad') {
      inSpeech = step.event.type === 'speech_start';
      event = endpointer.onVad(step.event);
    } else if (step.kind === 'voiced' && inSpeech) endpointer.onVoice(step.atMs);
    else if (step.kind === 'partial')
      event = endpointer.onTranscript({ type: 'partial', text: step.text }, step.atMs);
    else if (step.kind === 'final') {
      event = endpointer.onTranscript(
        { type: 'final', text: step.text, endOfTurn: step.endOfTurn },
        step.atMs,
      );
    } else if (step.kind === 'tick') event = endpointer.tick(step.atMs);
    if (event) events.push(event);
  }
  return events;
}
