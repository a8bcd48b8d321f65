import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../core/errors.ts';

/** Deeper than any agent, flow or call body the API takes; deeper input is refused before it is parsed. */
export const MAX_JSON_DEPTH = 64;

/**
 * Parses a JSON request body: strict UTF-8 (invalid bytes are refused, never replaced), at most
 * MAX_JSON_DEPTH levels of nesting, no prototype keys. An empty body is `undefined`: the route decides
 * whether it needs one. Every refusal is `400 invalid_request` naming what was refused.
 */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  if (!isUtf8(raw)) throw new ApiError('invalid_request', 'body: is not valid UTF-8');
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte order mark is not part of the JSON
  const depth = nestingDepth(text, MAX_JSON_DEPTH);
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

/**
 * The deepest nesting of arrays and objects in JSON text, ignoring brackets inside strings; counting stops once
 * it passes `stopAbove`. Strings are skipped with indexOf, so long text values cost little.
 */
export function nestingDepth(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i);
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}

/** The index of the quote that closes the string opened at `open` (the text's end when unterminated). */
function closingQuote(text: string, open: number): number {
  let quote = text.indexOf('"', open + 1);
  while (quote !== -1) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return text.length;
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
