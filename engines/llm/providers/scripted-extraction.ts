/**
 * Argument values the scripted dialog engine can find in the caller's words, by the JSON Schema of a function's
 * parameters. Per property, in schema order:
 * - `enum`: the value sharing the most content words with the utterance (at least one);
 * - `boolean`: true on a yes, false on a no;
 * - `number` / `integer`: a number written in digits next to a word of the property's name ("3 guests" for
 *   `guests`), else the first one; digit runs that read as a phone number (6+ digits) are never quantities;
 * - `string` named like a phone number (phone, mobile): the longest run of 6+ digits (spaces and dashes joined);
 * - `string` named like an email: the first address;
 * - `string` named like a name: the words after "my name is", "I am", "this is", "mera naam", "naam";
 * - any other `string`: the whole utterance when the property is required.
 * Properties with nothing found are left out.
 */
import { contentWords } from './scripted-words.ts';

interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
}

/** How many words a spoken name may have ("Ravi Kumar Sharma"). */
const NAME_WORDS_MAX = 3;

const NAME_LEAD =
  /\b(?:my name is|name is|i am|i'm|this is|mera naam|naam)\s+([\p{L}\p{M}]+(?:\s+[\p{L}\p{M}]+)*)/iu;

/** Words that end a spoken name: "I am Ravi and I want...", "mera naam Ravi hai". */
const AFTER_NAME = new Set([
  'and',
  'from',
  'here',
  'speaking',
  'calling',
  'hai',
  'hoon',
  'hun',
  'but',
  'the',
]);

export function extractArguments(
  parameters: Record<string, unknown>,
  utterance: string,
): Record<string, unknown> {
  const properties = parameters.properties;
  if (typeof properties !== 'object' || properties === null) return {};
  const required = new Set(Array.isArray(parameters.required) ? parameters.required : []);
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties as Record<string, PropertySchema>)) {
    const value = valueFor(name, schema ?? {}, utterance, required.has(name));
    if (value !== undefined) values[name] = value;
  }
  return values;
}

function valueFor(name: string, schema: PropertySchema, utterance: string, required: boolean): unknown {
  if (Array.isArray(schema.enum)) return enumValue(schema.enum, utterance);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  const key = name.toLowerCase();
  switch (type) {
    case 'boolean': {
      const words = new Set(contentWords(utterance));
      if (words.has('yes') && !words.has('no')) return true;
      if (words.has('no') && !words.has('yes')) return false;
      return undefined;
    }
    case 'number':
    case 'integer':
      return numberFor(key, utterance, type === 'integer');
    default:
      if (/phone|mobile/.test(key)) return phoneNumber(utterance);
      if (/e-?mail/.test(key)) return /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/.exec(utterance)?.[0];
      if (/name/.test(key)) return spokenName(utterance) ?? (required ? utterance.trim() : undefined);
      return required && utterance.trim() !== '' ? utterance.trim() : undefined;
  }
}

/** Digit runs this long are phone numbers, not quantities. */
const PHONE_DIGITS_MIN = 6;

function numberFor(key: string, utterance: string, integer: boolean): number | undefined {
  const nameWords = new Set(contentWords(key.replace(/_/g, ' ')));
  const pattern = integer ? /-?\d+/g : /-?\d+(?:\.\d+)?/g;
  const text = utterance
    .replace(/(\d),(\d)/g, '$1$2')
    .replace(PHONE_RUN, (run) => (digitCount(run) >= PHONE_DIGITS_MIN ? ' ' : run));
  let fallback: number | undefined;
  for (const match of text.matchAll(pattern)) {
    const start = match.index ?? 0;
    const before = contentWords(text.slice(0, start)).at(-1);
    const after = contentWords(text.slice(start + match[0].length))[0];
    if ((before !== undefined && nameWords.has(before)) || (after !== undefined && nameWords.has(after))) {
      return Number(match[0]);
    }
    fallback ??= Number(match[0]);
  }
  return fallback;
}

function enumValue(options: unknown[], utterance: string): unknown {
  const said = new Set(contentWords(utterance));
  let best: unknown;
  let bestShared = 0;
  for (const option of options) {
    const shared = contentWords(String(option)).filter((word) => said.has(word)).length;
    if (shared > bestShared) {
      best = option;
      bestShared = shared;
    }
  }
  return best;
}

/** Digits, possibly grouped by spaces or dashes ("98765 43210", "+91-98765-43210"). */
const PHONE_RUN = /\+?\d[\d\s-]*\d/g;

function digitCount(text: string): number {
  return text.replace(/\D/g, '').length;
}

function phoneNumber(utterance: string): string | undefined {
  const runs = (utterance.match(PHONE_RUN) ?? []).filter((run) => digitCount(run) >= PHONE_DIGITS_MIN);
  return runs.map((run) => run.replace(/[\s-]/g, '')).sort((a, b) => b.length - a.length)[0];
}

function spokenName(utterance: string): string | undefined {
  const match = NAME_LEAD.exec(utterance);
  if (match === null) return undefined;
  const words: string[] = [];
  for (const word of match[1]!.split(/\s+/)) {
    if (AFTER_NAME.has(word.toLowerCase()) || words.length === NAME_WORDS_MAX) break;
    words.push(word);
  }
  return words.length === 0 ? undefined : words.join(' ');
}
