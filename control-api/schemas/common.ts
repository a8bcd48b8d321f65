import { z } from 'zod';
import { ERROR_CATALOGUE, type ErrorCode } from '../../core/errors.ts';
import { ID_PREFIXES, type IdKind, idPattern } from '../../core/ids.ts';

export const timestamp = z.string().describe('ISO 8601 UTC timestamp with milliseconds');

export const idOf = (kind: IdKind) =>
  z
    .string()
    .max(64)
    .regex(
      idPattern(kind),
      `must be ${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} id (${ID_PREFIXES[kind]}_...)`,
    );

export const idParams = (kind: IdKind) => z.object({ id: z.string().min(1).max(64) }).describe(`${kind} id`);

export const errorEnvelope = z.object({
  error: z.object({
    code: z.enum(Object.keys(ERROR_CATALOGUE) as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
  }),
});

export const validationErrorBody = z.object({
  error: z.enum(['invalid_flow', 'invalid_tools']),
  details: z.array(z.object({ path: z.string(), message: z.string() })),
});

/** `if_revision`: refuse the save when the agent's revision is no longer this one. */
export const ifRevision = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
