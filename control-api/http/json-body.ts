import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../core/errors.ts';

/** Deeper than any agent, flow or call body the API takes; deeper input is refused before it is parsed. */
export const MAX_JSON_DEPTH = 64;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses a JSON request body: strict UTF-8 (invalid bytes are refused, never replaced), at most
 * MAX_JSON_DEPTH levels of nesting, no prototype keys. An empty body is `undefined`: the route decides
 * whether it needs one. Every refusal is `400 invalid_request` naming what was refused.
 */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  let text: string;
  try {
    text = strictUtf8.decode(raw);
  } catch {
    throw new ApiError('invalid_request', 'body: is not valid UTF-8');
  }
  const depth = nestingDepth(text);
  if (depth > MAX_JSON_DEPTH) {
    throw new ApiError('invalid_request', `body: nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  // A reviver is several times slower than plain parsing; only bodies that could hold such a key need one
  // (escaped keys such as "\u005f_proto__" contain a backslash).
  const mayHoldPrototypeKey = /__proto__|constructor|prototype|\\/.test(text);
  try {
    return mayHoldPrototypeKey ? JSON.parse(text, refusePrototypeKeys) : JSON.parse(text);
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError('invalid_request', 'body: malformed JSON');
  }
}

/** `__proto__`, or `constructor` holding `prototype`, would reach an object's prototype once merged. */
function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__') {
    throw new ApiError('invalid_request', 'body: the key "__proto__" is refused');
  }
  if (key === 'constructor' && isObjectWithPrototype(value)) {
    throw new ApiError('invalid_request', 'body: the key "constructor" holding "prototype" is refused');
  }
  return value;
}

function isObjectWithPrototype(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype');
}

/** The deepest nesting of arrays and objects in JSON text, ignoring brackets inside strings. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** Replaces Fastify's JSON parser with `parseJsonBody` for every `application/json` body. */
export function registerJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, raw, done) => {
    try {
      done(null, parseJsonBody(raw as Buffer));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
