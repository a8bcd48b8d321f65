/**
 * A simulated call of a flow test: text only, through the flow runtime live calls use (node prompts, the
 * global prompt, edges as functions, extraction, endCall), with a model playing the caller. No phone rings
 * and no tool runs: the dialog is given no tools, and a function it does not offer is answered as live calls
 * answer it.
 */
import type { SimulateCall, SimulatedCall } from '../../core/flows/jobs/simulation.ts';
import { HANG_UP } from '../../core/flows/jobs/simulation.ts';
import { formatTurns, type Turn } from '../../core/flows/jobs/transcripts.ts';
import type { ChatMessage } from '../../engines/llm/types.ts';
import { FlowRuntime } from '../dialog/flow-runtime.ts';
import { MAX_FUNCTION_ROUNDS } from '../reply.ts';

/** A caller turn's length at most: a spoken line, not an essay. */
const CALLER_TOKENS = 300;

export const simulateCall: SimulateCall = async (input) => {
  const dialog = new FlowRuntime(input.settings, input.flow, input.variables, []);
  const turns: Turn[] = [];
  const history: ChatMessage[] = [];
  const path = [dialog.currentNode()];
  const opening = dialog.opening();
  if (opening) {
    turns.push({ speaker: 'AGENT', text: opening });
    history.push({ role: 'assistant', content: opening });
  }
  const done = (endedBy: SimulatedCall['endedBy']): SimulatedCall => ({
    transcript: formatTurns(turns),
    endedBy,
    path,
  });
  for (let turn = 0; turn < input.maxTurns; turn++) {
    const said = await callerTurn(input, turns);
    if (said === undefined) return done('caller');
    turns.push({ speaker: 'CALLER', text: said });
    history.push({ role: 'user', content: said });
    const reply = await agentTurn(input, dialog, history, path);
    if (reply.text) turns.push({ speaker: 'AGENT', text: reply.text });
    if (reply.ended) return done('agent');
  }
  return done('turn_limit');
};

/** The caller's next line, or undefined when the caller hangs up. */
async function callerTurn(
  input: Parameters<SimulateCall>[0],
  turns: readonly Turn[],
): Promise<string | undefined> {
  // The caller model sees the call from the caller's side: the agent's lines are what it is told.
  const messages: ChatMessage[] = [
    { role: 'system', content: input.callerSystem },
    ...turns.map(
      (t): ChatMessage => ({ role: t.speaker === 'AGENT' ? 'user' : 'assistant', content: t.text }),
    ),
  ];
  if (turns.length === 0)
    messages.push({ role: 'user', content: '(the call connects; the agent is silent)' });
  const answer = await input.callerChat({ messages, maxTokens: CALLER_TOKENS });
  const text = answer.text.replace(HANG_UP, '').replace(/\s+/g, ' ').trim();
  if (answer.text.includes(HANG_UP) || text === '') return undefined;
  return text;
}

/** The agent's reply, as the live pipeline forms it: model, then the functions it called, until it speaks. */
async function agentTurn(
  input: Parameters<SimulateCall>[0],
  dialog: FlowRuntime,
  history: ChatMessage[],
  path: string[],
): Promise<{ text: string; ended: boolean }> {
  const spoken: string[] = [];
  for (let round = 0; round < MAX_FUNCTION_ROUNDS; round++) {
    const context = dialog.turnContext();
    const answer = await input.agentChat({
      messages: [{ role: 'system', content: context.system }, ...history],
      functions: context.functions,
    });
    const text = answer.text.trim();
    if (text) spoken.push(text);
    if (answer.toolCalls.length === 0) {
      if (text) history.push({ role: 'assistant', content: text });
      break;
    }
    history.push({ role: 'assistant', content: text, toolCalls: answer.toolCalls });
    let ended = false;
    for (const call of answer.toolCalls) {
      const action = dialog.onFunctionCall(call);
      let result: Record<string, unknown>;
      if (action.type === 'transition') {
        path.push(action.to);
        result = { ok: true, now_at: action.to };
      } else if (action.type === 'end_call') {
        if (action.message) spoken.push(action.message);
        ended = true;
        result = { ok: true, ending: true };
      } else if (action.type === 'tool') {
        result = { ok: false, error: `the tool ${action.tool.name} is not available on this call` };
      } else {
        result = { ok: false, error: `no function named ${action.name}` };
      }
      history.push({ role: 'tool', toolCallId: call.id, content: JSON.stringify(result) });
    }
    if (ended) return { text: spoken.join(' '), ended: true };
  }
  return { text: spoken.join(' '), ended: false };
}
