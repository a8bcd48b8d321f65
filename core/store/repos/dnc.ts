import type { DncEntriesTable } from '../db.ts';
import { DNC_SOURCES, type DncEntry, type DncRepo, type DncSource } from '../dnc-types.ts';
import { assertLimit, toPage } from '../page.ts';
import type { Scope } from '../scope.ts';
import type { Page } from '../values.ts';

/** Rows per INSERT: far below SQLite's bound on parameters in one statement (6 a row). */
const INSERT_CHUNK = 500;

const sourceOf = (value: string): DncSource =>
  (DNC_SOURCES as readonly string[]).includes(value) ? (value as DncSource) : 'api';

const toEntry = (row: DncEntriesTable): DncEntry => ({
  workspaceId: row.workspace_id,
  number: row.number,
  reason: row.reason,
  source: sourceOf(row.source),
  callId: row.call_id,
  createdAt: Number(row.created_at),
});

/** The workspace's do-not-call list. */
export class DncStore implements DncRepo {
  constructor(private readonly scope: Scope) {}

  add(
    workspaceId: string,
    numbers: readonly string[],
    entry: { reason: string | null; source: DncSource; callId: string | null },
  ): Promise<number> {
    const unique = [...new Set(numbers)];
    return this.scope.transaction(async ({ db, now }) => {
      let added = 0;
      for (let start = 0; start < unique.length; start += INSERT_CHUNK) {
        const rows: DncEntriesTable[] = unique.slice(start, start + INSERT_CHUNK).map((number) => ({
          workspace_id: workspaceId,
          number,
          reason: entry.reason,
          source: entry.source,
          call_id: entry.callId,
          created_at: now,
        }));
        const inserted = await db
          .insertInto('dnc_entries')
          .values(rows)
          .onConflict((oc) => oc.columns(['workspace_id', 'number']).doNothing())
          .returning('number')
          .execute();
        added += inserted.length;
      }
      return added;
    });
  }

  async get(workspaceId: string, number: string): Promise<DncEntry | undefined> {
    const row = await this.scope.db
      .selectFrom('dnc_entries')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('number', '=', number)
      .executeTakeFirst();
    return row ? toEntry(row) : undefined;
  }

  async has(workspaceId: string, number: string): Promise<boolean> {
    const row = await this.scope.db
      .selectFrom('dnc_entries')
      .select('number')
      .where('workspace_id', '=', workspaceId)
      .where('number', '=', number)
      .executeTakeFirst();
    return row !== undefined;
  }

  async list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<DncEntry>> {
    const limit = assertLimit(options.limit);
    const after = options.after;
    const rows = await this.scope.db
      .selectFrom('dnc_entries')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .$if(after !== undefined, (q) => q.where('number', '>', after ?? ''))
      .orderBy('number', 'asc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toEntry);
  }

  async remove(workspaceId: string, number: string): Promise<boolean> {
    const result = await this.scope.db
      .deleteFrom('dnc_entries')
      .where('workspace_id', '=', workspaceId)
      .where('number', '=', number)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
