import { ApiError, notFound } from '../errors.ts';
import type { DncEntry, Store } from '../store/types.ts';

export const DNC_LIMITS = {
  /** Numbers in one `POST /v2/dnc` (JSON or CSV). */
  perRequest: 10_000,
  /** Characters of a reason. */
  reasonChars: 200,
} as const;

/** An Indian number in E.164: what campaigns dial, so what the list holds. */
export const INDIAN_E164 = /^\+91\d{10}$/;

/** Spaces, dashes, dots and brackets people type in numbers; nothing else is forgiven. */
const TYPED_SEPARATORS = /[\s\-.()]/g;

/** The number in E.164, or the reason it is not one the list can hold. */
export function listableNumber(raw: string): { number: string } | { problem: string } {
  const number = raw.replace(TYPED_SEPARATORS, '');
  if (INDIAN_E164.test(number)) return { number };
  if (/^\+\d{7,15}$/.test(number)) return { problem: 'only Indian (+91) numbers can be listed' };
  return { problem: 'must be an E.164 number such as +919876543210' };
}

export interface DncRejection {
  /** 1-based position in the request's list (CSV: data row, the header not counted). */
  row: number;
  value: string;
  message: string;
}

export interface DncAddition {
  added: number;
  alreadyListed: number;
  rejected: DncRejection[];
}

/**
 * The workspace's do-not-call list: numbers its campaigns never dial. Single calls are not checked against it
 * (the interface leaves that to the caller).
 */
export class DncList {
  constructor(private readonly store: Store) {}

  /** Lists every valid number of `raw` in one transaction; invalid ones are reported by position, not fatal. */
  async add(workspaceId: string, raw: readonly string[], reason: string | null): Promise<DncAddition> {
    if (raw.length > DNC_LIMITS.perRequest) {
      throw new ApiError('invalid_request', `numbers: at most ${DNC_LIMITS.perRequest} a request`);
    }
    const rejected: DncRejection[] = [];
    const numbers: string[] = [];
    raw.forEach((value, index) => {
      const checked = listableNumber(value);
      if ('number' in checked) numbers.push(checked.number);
      else rejected.push({ row: index + 1, value: value.slice(0, 40), message: checked.problem });
    });
    const distinct = new Set(numbers).size;
    const added =
      distinct === 0
        ? 0
        : await this.store.dnc.add(workspaceId, numbers, { reason, source: 'api', callId: null });
    return { added, alreadyListed: distinct - added, rejected };
  }

  async get(workspaceId: string, rawNumber: string): Promise<DncEntry> {
    const checked = listableNumber(rawNumber);
    const entry = 'number' in checked ? await this.store.dnc.get(workspaceId, checked.number) : undefined;
    if (!entry) throw notFound(`number ${rawNumber} on the do-not-call list`);
    return entry;
  }

  list(workspaceId: string, options: { limit: number; after?: string }) {
    return this.store.dnc.list(workspaceId, options);
  }

  async remove(workspaceId: string, rawNumber: string): Promise<string> {
    const checked = listableNumber(rawNumber);
    if (!('number' in checked) || !(await this.store.dnc.remove(workspaceId, checked.number))) {
      throw notFound(`number ${rawNumber} on the do-not-call list`);
    }
    return checked.number;
  }
}

/** Campaigns and the do-not-call list answer `503 campaigns_unavailable` when the operator turned them off. */
export async function assertCampaignsEnabled(store: Store, workspaceId: string): Promise<void> {
  const workspace = await store.workspaces.get(workspaceId);
  if (workspace && !workspace.campaignsEnabled) {
    throw new ApiError(
      'campaigns_unavailable',
      'campaigns and the do-not-call list are turned off for this workspace; the operator can turn them on',
    );
  }
}
