import type { ExpressionBuilder, UpdateObject } from 'kysely';
import type { Database } from '../db.ts';
import type { Scope } from '../scope.ts';

/** The columns of a background job table that workers claim with a lease, renew and finish. */
interface LeasedJobColumns {
  id: string;
  workspace_id: string;
  status: string;
  lease_owner: string | null;
  lease_until: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

type JobTable = { [K in keyof Database]: Database[K] extends LeasedJobColumns ? K : never }[keyof Database];

/** The columns of its own a statement writes beside the lease's; `now` is the statement's time. */
export type JobColumns<T extends JobTable> = (
  now: number,
  eb: ExpressionBuilder<Database, T>,
) => UpdateObject<Database, T, T>;

/** The same columns, seen on the union of job tables the queries are written against. */
type AnyJobColumns = (
  now: number,
  eb: ExpressionBuilder<Database, JobTable>,
) => UpdateObject<Database, JobTable, JobTable>;

/**
 * The claim, lease and finish statements of one job table. A job is open (claimable and finishable) in one of
 * `openStatuses`; a worker holds it while it is `running` under the worker's `lease_owner`, until `lease_until`.
 */
export class LeasedJobs<T extends JobTable, R> {
  /** Named as any job table: kysely resolves the shared columns on the union, not on the generic `T`. */
  private readonly table: JobTable;

  constructor(
    private readonly scope: Scope,
    table: T,
    private readonly openStatuses: readonly string[],
    private readonly toRecord: (row: Database[T]) => R,
  ) {
    this.table = table;
  }

  /** A job of the workspace created at or after `since`. */
  async get(workspaceId: string, id: string, since: number): Promise<R | undefined> {
    const row = await this.scope.db
      .selectFrom(this.table)
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('created_at', '>=', since)
      .executeTakeFirst();
    return row ? this.toRecord(row) : undefined;
  }

  /** Open jobs nobody holds (never claimed, or the claim lapsed), oldest first. */
  async claimable(limit: number): Promise<string[]> {
    const now = this.scope.now;
    const rows = await this.scope.db
      .selectFrom(this.table)
      .select('id')
      .where('status', 'in', this.openStatuses)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('created_at', 'asc')
      .limit(limit)
      .execute();
    return rows.map((r) => r.id);
  }

  /** Takes an open job whose claim lapsed, writing `columns` with the lease; undefined when another has it. */
  async claim(id: string, owner: string, leaseMs: number, columns?: JobColumns<T>): Promise<R | undefined> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable(this.table)
      .set((eb) => ({ ...this.own(columns)(now, eb), lease_owner: owner, lease_until: now + leaseMs }))
      .where('id', '=', id)
      .where('status', 'in', this.openStatuses)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return undefined;
    const row = await this.scope.db
      .selectFrom(this.table)
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? this.toRecord(row) : undefined;
  }

  /** Writes `columns` to a running job while `owner` holds it; false otherwise. */
  whileHeld(id: string, owner: string, columns: JobColumns<T>): Promise<boolean> {
    return this.updateHeld(id, owner, this.own(columns));
  }

  /** Extends the claim (writing `columns` with it) while `owner` holds the running job; false otherwise. */
  renew(id: string, owner: string, leaseMs: number, columns?: JobColumns<T>): Promise<boolean> {
    return this.updateHeld(id, owner, (now, eb) => ({
      ...this.own(columns)(now, eb),
      lease_until: now + leaseMs,
    }));
  }

  /** Gives a running job's claim up (writing `columns` with it) so another worker takes it at once. */
  async release(id: string, owner: string, columns?: JobColumns<T>): Promise<void> {
    await this.updateHeld(id, owner, (now, eb) => ({ ...this.own(columns)(now, eb), lease_until: null }));
  }

  /**
   * Ends an open job held by `owner` (anyone when null), writing `columns` (its final status among them);
   * false when it had ended, was deleted, or another worker holds it.
   */
  async finish(id: string, owner: string | null, columns: JobColumns<T>): Promise<boolean> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable(this.table)
      .set((eb) => ({ ...this.own(columns)(now, eb), lease_until: null, updated_at: now, ended_at: now }))
      .where('id', '=', id)
      .where('status', 'in', this.openStatuses)
      .$if(owner !== null, (q) => q.where('lease_owner', '=', owner ?? ''))
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  private async updateHeld(id: string, owner: string, columns: AnyJobColumns): Promise<boolean> {
    const now = this.scope.now;
    const result = await this.scope.db
      .updateTable(this.table)
      .set((eb) => columns(now, eb))
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  /** The table's own columns, seen as columns of any job table (the queries' view of it). */
  private own(columns: JobColumns<T> | undefined): AnyJobColumns {
    return columns ? (now, eb) => columns(now, eb as ExpressionBuilder<Database, T>) : () => ({});
  }
}
