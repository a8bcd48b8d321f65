import { AsyncLocalStorage } from 'node:async_hooks';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Database } from './db.ts';
import type { DialectName } from './dialects.ts';

/** The pool, or one transaction on it (Kysely's Transaction is a Kysely). */
export type Executor = Kysely<Database>;

interface Ambient {
  readonly trx: Executor;
  open: boolean;
}

/**
 * Where a repository runs its queries. A scope is either bound to one transaction (the repositories that
 * `store.transaction` hands out) or unbound (the store's own repositories). An unbound scope joins the
 * transaction that is running in the current async context, so calling `store.wallet.hold` from inside a
 * `store.transaction` callback joins it instead of waiting for the connection it holds (SQLite has one) or
 * blocking on its row locks (PostgreSQL).
 */
export class Scope {
  constructor(
    readonly dialect: DialectName,
    readonly clock: Clock,
    private readonly root: Executor,
    private readonly ambient: AsyncLocalStorage<Ambient>,
    private readonly bound?: Executor,
  ) {}

  static create(dialect: DialectName, clock: Clock, root: Executor): Scope {
    return new Scope(dialect, clock, root, new AsyncLocalStorage<Ambient>());
  }

  /** The executor for the next statement. */
  get db(): Executor {
    if (this.bound) return this.bound;
    const ambient = this.ambient.getStore();
    return ambient?.open ? ambient.trx : this.root;
  }

  get now(): number {
    return this.clock.now();
  }

  get isPostgres(): boolean {
    return this.dialect === 'postgres';
  }

  /** Runs `fn` in a transaction: the current one when there is one, else a new one (committed when `fn` resolves). */
  async transaction<T>(fn: (scope: Scope) => Promise<T>): Promise<T> {
    const current = this.db;
    if (current.isTransaction) return fn(this.bindTo(current));
    return current.transaction().execute(async (trx) => {
      const ambient: Ambient = { trx, open: true };
      try {
        return await this.ambient.run(ambient, () => fn(this.bindTo(trx)));
      } finally {
        // Work that outlives the callback (a stray promise) must not reuse a finished transaction.
        ambient.open = false;
      }
    });
  }

  private bindTo(trx: Executor): Scope {
    return trx === this.bound ? this : new Scope(this.dialect, this.clock, this.root, this.ambient, trx);
  }
}
