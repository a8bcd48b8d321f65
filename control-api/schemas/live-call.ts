import { z } from 'zod';

/** `POST /v2/calls/{id}/control`: one action on a web call in progress. */
export const liveControlBody = z.discriminatedUnion('action', [
  z
    .object({ action: z.literal('say'), text: z.string().trim().min(1).max(1_000) })
    .strict()
    .describe('the agent says this now, in place of whatever it was saying or preparing'),
  z
    .object({ action: z.literal('end_call'), message: z.string().trim().min(1).max(500).optional() })
    .strict()
    .describe('the agent says `message` (if given), then hangs up'),
  z
    .object({ action: z.literal('mute') })
    .strict()
    .describe('the agent stops speaking and stays silent; it keeps listening'),
  z
    .object({ action: z.literal('unmute') })
    .strict()
    .describe('the agent answers again from the next turn'),
  z
    .object({
      action: z.literal('add_message'),
      role: z.enum(['system', 'user', 'assistant']),
      content: z.string().trim().min(1).max(8_000),
    })
    .strict()
    .describe('a message added to the conversation the model sees, from its next reply on'),
]);

export const liveControlAccepted = z.object({
  object: z.literal('call_control'),
  call_id: z.string(),
  action: z.string(),
  accepted: z.literal(true),
});
