/**
 * A simulated call, as the job runner asks for one. The pipeline runs it through the flow runtime of live
 * calls (pipeline/flow-tests/); core knows only this shape.
 */
import type { ChatMessage, FunctionSpec } from '../../../engines/llm/types.ts';
import type { AgentSettings, Flow } from '../../agents/types.ts';
import type { Answer } from './models.ts';

/** One metered model request of a simulated call. */
export type Chat = (request: {
  messages: ChatMessage[];
  functions?: FunctionSpec[];
  maxTokens?: number;
}) => Promise<Answer>;

export interface SimulatedCallInput {
  flow: Flow;
  /** The agent the flow runs on (its tools are never run: none is offered). */
  settings: AgentSettings;
  variables: Readonly<Record<string, string | number | boolean>>;
  /** The caller's instructions (system message of each caller turn). */
  callerSystem: string;
  /** Agent turns at most. */
  maxTurns: number;
  agentChat: Chat;
  callerChat: Chat;
}

export interface SimulatedCall {
  /** One `AGENT:`/`CALLER:` turn per line. */
  transcript: string;
  endedBy: 'agent' | 'caller' | 'turn_limit';
  /** The nodes the call passed through, in order. */
  path: string[];
}

export type SimulateCall = (input: SimulatedCallInput) => Promise<SimulatedCall>;

/** What the caller answers to hang up. */
export const HANG_UP = '[HANGUP]';
