import type { FunctionSpec } from '../../engines/llm/types.ts';

/** The function offered to the model for hanging up, when the agent allows it. */
export const END_CALL_FUNCTION = 'end_call';

export function endCallFunction(): FunctionSpec {
  return {
    name: END_CALL_FUNCTION,
    description:
      'End the call. Use it only when the conversation is complete or the caller asks to end it, after saying goodbye.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
  };
}
