import { monotonicFactory } from 'ulid';

/** Every id the platform hands out: prefix, underscore, 26-character ULID (time-ordered). */
export const ID_PREFIXES = {
  workspace: 'ws',
  apiKey: 'key',
  agent: 'agt',
  call: 'call',
  campaign: 'cmp',
  pool: 'ppl',
  event: 'evt',
  flowTest: 'frf',
  transaction: 'txn',
  hold: 'hld',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const nextUlid = monotonicFactory();

/** A new id; monotonic within a process so ids made in the same millisecond still sort in order. */
export function newId(kind: IdKind, nowMs: number = Date.now()): string {
  return `${ID_PREFIXES[kind]}_${nextUlid(nowMs)}`;
}

const ULID_BODY = '[0-9A-HJKMNP-TV-Z]{26}';

export function idPattern(kind: IdKind): RegExp {
  return new RegExp(`^${ID_PREFIXES[kind]}_${ULID_BODY}$`);
}

export function isId(kind: IdKind, value: string): boolean {
  return idPattern(kind).test(value);
}
