import type { Page } from './values.ts';

export const DNC_SOURCES = ['api', 'opt_out'] as const;
/** How a number came onto the list: through the API, or the caller asked on a call. */
export type DncSource = (typeof DNC_SOURCES)[number];

/** A number on a workspace's do-not-call list. */
export interface DncEntry {
  workspaceId: string;
  /** E.164. */
  number: string;
  reason: string | null;
  source: DncSource;
  /** The call the caller opted out on (`opt_out` only). */
  callId: string | null;
  createdAt: number;
}

export interface DncRepo {
  /**
   * Lists the numbers that are not listed yet (a listed number keeps its first reason and time); returns how
   * many were new. One transaction: all or none.
   */
  add(
    workspaceId: string,
    numbers: readonly string[],
    entry: { reason: string | null; source: DncSource; callId: string | null },
  ): Promise<number>;
  get(workspaceId: string, number: string): Promise<DncEntry | undefined>;
  /** Whether the number is listed: what a campaign asks right before it dials. */
  has(workspaceId: string, number: string): Promise<boolean>;
  /** Entries in number order, after `after` (a number). */
  list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<DncEntry>>;
  remove(workspaceId: string, number: string): Promise<boolean>;
}
