import { AGENT_PAUSE_MS, CALLEE_VOICE_ID, GOODBYE_WAIT_MS, SILENT_AGENT_PROMPT_MS } from './behaviour.ts';
import type { PreparedSpeech } from './callee-audio.ts';
import type { CalleeConduct, ConductTools } from './conduct.ts';
import { AgentListener } from './listener.ts';
import type { PlayedFrame } from './playback.ts';

/**
 * The conversing callee: it waits for the agent's opening line, and each time the agent has paused for
 * `AGENT_PAUSE_MS` after speaking it says the next line of its script. After its last line it waits for the
 * agent's answer to finish (at most `GOODBYE_WAIT_MS`) and hangs up. What it hears is the agent audio as the
 * carrier plays it, so it answers when the agent's words have been heard, not when they were sent.
 */

type Phase =
  /** Waiting for the agent to finish a turn. */
  | { kind: 'listening' }
  /** A line is due; it goes out as soon as its audio is ready. */
  | { kind: 'line_due' }
  | { kind: 'speaking' }
  /** The script is done: waiting for the agent's last answer. */
  | { kind: 'closing'; sinceMs: number }
  | { kind: 'done' };

export class ScriptedConversation implements CalleeConduct {
  private readonly listener = new AgentListener(AGENT_PAUSE_MS);
  private phase: Phase = { kind: 'listening' };
  private nextLine = 0;

  constructor(
    private readonly script: readonly string[],
    private readonly tools: ConductTools,
  ) {}

  /** Starts synthesizing a script ahead of any call. */
  static prepare(speech: PreparedSpeech, script: readonly string[]): void {
    for (const line of script) speech.prepare(CALLEE_VOICE_ID, line);
  }

  tick(heard: PlayedFrame, streamMs: number): void {
    const agentFinished = this.listener.hear(heard.audio);
    switch (this.phase.kind) {
      case 'listening': {
        const agentSilent = !this.listener.heardAnything && streamMs >= SILENT_AGENT_PROMPT_MS;
        if (agentFinished || (agentSilent && this.nextLine === 0)) this.takeTurn();
        break;
      }
      case 'line_due':
        this.sayLine();
        break;
      case 'speaking':
        if (this.tools.mouth.speaking) break;
        // What the agent said over the callee's line is not an answer to it.
        this.listener.reset();
        this.phase =
          this.nextLine < this.script.length ? { kind: 'listening' } : { kind: 'closing', sinceMs: streamMs };
        break;
      case 'closing':
        if (agentFinished || streamMs - this.phase.sinceMs >= GOODBYE_WAIT_MS) this.hangUp();
        break;
      case 'done':
        break;
    }
  }

  private takeTurn(): void {
    if (this.nextLine >= this.script.length) {
      this.hangUp();
      return;
    }
    this.phase = { kind: 'line_due' };
    this.sayLine();
  }

  private sayLine(): void {
    const frames = this.tools.speech.frames(CALLEE_VOICE_ID, this.script[this.nextLine] as string);
    if (frames === undefined) return;
    this.nextLine++;
    this.tools.mouth.say(frames);
    this.phase = { kind: 'speaking' };
  }

  private hangUp(): void {
    this.phase = { kind: 'done' };
    this.tools.hangUp();
  }
}
