import type { z } from 'zod';
import { ApiError } from '../../core/errors.ts';

type Issue = z.core.$ZodIssue;

/** `voice.voice_id`, `tools[2].name`: the field path as a client wrote it. */
export function fieldPath(base: string, path: readonly PropertyKey[]): string {
  let out = base;
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || '(body)';
}

function describeIssue(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      return /received undefined$/.test(issue.message) ? 'is required' : `must be ${article(issue.expected)}`;
    case 'too_big':
      return issue.origin === 'string'
        ? `must be at most ${issue.maximum} characters`
        : issue.origin === 'array'
          ? `must have at most ${issue.maximum} items`
          : `must be at most ${issue.maximum}`;
    case 'too_small':
      return issue.origin === 'string'
        ? Number(issue.minimum) <= 1
          ? 'must not be empty'
          : `must be at least ${issue.minimum} characters`
        : issue.origin === 'array'
          ? `must have at least ${issue.minimum} items`
          : `must be at least ${issue.minimum}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_format':
      return issue.message.startsWith('Invalid') ? `has an invalid format (${issue.format})` : issue.message;
    default:
      return issue.message;
  }
}

/** The keys a top-level object schema accepts, comma-separated, or undefined for other schemas. */
function acceptedKeys(schema: z.ZodType): string | undefined {
  const shape = (schema as { shape?: unknown }).shape;
  if (typeof shape !== 'object' || shape === null) return undefined;
  return Object.keys(shape).join(', ');
}

function article(expected: string): string {
  const noun = expected === 'int' ? 'integer' : expected;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

/** What the keys of a parsed input are called in messages. */
export type InputPart = 'field' | 'query parameter' | 'path parameter';

/** Parses `input` or throws `400 invalid_request` whose message names the first bad field. */
export function parseOrThrow<S extends z.ZodType>(
  schema: S,
  input: unknown,
  base: string,
  part: InputPart = 'field',
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw new ApiError('invalid_request', `${base || 'request'}: invalid`);
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((key) => fieldPath(base, [...issue.path, key]));
    const plural = names.length > 1 ? 's' : '';
    const accepted = part === 'query parameter' ? acceptedKeys(schema) : undefined;
    const hint =
      accepted === undefined ? '' : accepted.length === 0 ? '; none is accepted' : `; accepted: ${accepted}`;
    throw new ApiError('invalid_request', `${names.join(', ')}: unknown ${part}${plural}${hint}`);
  }
  throw new ApiError('invalid_request', `${fieldPath(base, issue.path)} ${describeIssue(issue)}`);
}
