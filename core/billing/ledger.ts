import { newId } from '../ids.ts';
import { assertPaise } from '../money.ts';
import type { WalletHoldsTable, WalletLedgerTable } from '../store/db.ts';
import { assertLimit, toPage } from '../store/page.ts';
import type { Scope } from '../store/scope.ts';
import {
  type HoldRecord,
  InsufficientBalanceError,
  type LedgerEntry,
  type LedgerKind,
  type Page,
  UnknownHoldError,
  type WalletBalance,
  type WalletLedger,
} from '../store/types.ts';

const DEFAULT_DESCRIPTIONS: Record<LedgerKind, string> = {
  topup: 'Wallet top-up',
  call: 'Call charges',
  flow_generation: 'Flow generation',
  transcription: 'Transcription',
  tts: 'Text to speech',
  number_rental: 'Number rental',
  adjustment: 'Adjustment',
};

function amountOf(value: number, allowZero: boolean): number {
  assertPaise(value, 'amountPaise');
  if (value < 0 || (value === 0 && !allowZero)) {
    throw new RangeError(`amountPaise must be ${allowZero ? 'zero or more' : 'positive'}`);
  }
  return value;
}

function toEntry(row: WalletLedgerTable): LedgerEntry {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    kind: row.kind,
    amountPaise: row.amount_paise,
    balanceAfterPaise: row.balance_after_paise,
    reference: row.reference,
    description: row.description,
    createdAt: row.created_at,
  };
}

function toHold(row: WalletHoldsTable): HoldRecord {
  return {
    workspaceId: row.workspace_id,
    reference: row.reference,
    kind: row.kind,
    amountPaise: row.amount_paise,
    status: row.status,
    capturedPaise: row.captured_paise,
    createdAt: row.created_at,
    settledAt: row.settled_at,
  };
}

/**
 * The wallet ledger on the store (docs/architecture.md, "Money and events"). The account row carries `balance_paise` and
 * `held_paise`; CHECK constraints keep 0 <= held <= balance. Money only moves through conditional UPDATEs
 * (`... WHERE balance_paise - held_paise >= amount`), which PostgreSQL re-evaluates after waiting for a
 * concurrent writer's row lock, so parallel holds and debits can never overdraw. Each operation runs in one
 * transaction (the caller's when there is one), checks before it writes so a refusal writes nothing, and is
 * idempotent on its reference: a racing duplicate loses on the unique key and undoes its account update.
 *
 * `capture` caps the charge at the held amount (settlement at the end of a call must never fail); the hold
 * records what was actually captured.
 */
export class Wallet implements WalletLedger {
  constructor(private readonly scope: Scope) {}

  async balance(workspaceId: string): Promise<WalletBalance> {
    return this.balanceIn(this.scope, workspaceId);
  }

  async credit(
    workspaceId: string,
    input: { amountPaise: number; reference: string; kind?: LedgerKind; description?: string },
  ): Promise<LedgerEntry> {
    const amount = amountOf(input.amountPaise, false);
    const kind = input.kind ?? 'topup';
    return this.scope.transaction(async (scope) => {
      const existing = await this.findEntry(scope, workspaceId, kind, input.reference);
      if (existing) return existing;
      await scope.db
        .insertInto('wallet_accounts')
        .values({ workspace_id: workspaceId, balance_paise: 0, held_paise: 0, updated_at: scope.now })
        .onConflict((oc) => oc.column('workspace_id').doNothing())
        .execute();
      const balanceAfter = await this.moveBalance(scope, workspaceId, amount);
      const entry = { workspaceId, kind, amount, balanceAfter, ...described(input) };
      return this.append(scope, entry, () => this.moveBalance(scope, workspaceId, -amount));
    });
  }

  async debit(
    workspaceId: string,
    input: { amountPaise: number; reference: string; kind: LedgerKind; description?: string },
  ): Promise<LedgerEntry> {
    const amount = amountOf(input.amountPaise, false);
    return this.scope.transaction(async (scope) => {
      const existing = await this.findEntry(scope, workspaceId, input.kind, input.reference);
      if (existing) return existing;
      const charged = await scope.db
        .updateTable('wallet_accounts')
        .set((eb) => ({ balance_paise: eb('balance_paise', '-', amount), updated_at: scope.now }))
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb('balance_paise', '-', eb.ref('held_paise')), '>=', amount))
        .returning('balance_paise')
        .executeTakeFirst();
      if (!charged) await this.refuse(scope, workspaceId, amount);
      const balanceAfter = charged?.balance_paise ?? 0;
      const entry = { workspaceId, kind: input.kind, amount: -amount, balanceAfter, ...described(input) };
      return this.append(scope, entry, () => this.moveBalance(scope, workspaceId, amount));
    });
  }

  async hold(
    workspaceId: string,
    input: { reference: string; amountPaise: number; kind: LedgerKind },
  ): Promise<HoldRecord> {
    const amount = amountOf(input.amountPaise, true);
    return this.scope.transaction(async (scope) => {
      const existing = await this.findHold(scope, workspaceId, input.reference);
      if (existing) return existing;
      const reserved = await scope.db
        .updateTable('wallet_accounts')
        .set((eb) => ({ held_paise: eb('held_paise', '+', amount), updated_at: scope.now }))
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb(eb('balance_paise', '-', eb.ref('held_paise')), '>=', amount))
        .executeTakeFirst();
      if (reserved.numUpdatedRows !== 1n) await this.refuse(scope, workspaceId, amount);
      const row: WalletHoldsTable = {
        workspace_id: workspaceId,
        reference: input.reference,
        kind: input.kind,
        amount_paise: amount,
        status: 'held',
        captured_paise: 0,
        created_at: scope.now,
        settled_at: null,
      };
      const inserted = await scope.db
        .insertInto('wallet_holds')
        .values(row)
        .onConflict((oc) => oc.columns(['workspace_id', 'reference']).doNothing())
        .executeTakeFirst();
      if (inserted.numInsertedOrUpdatedRows === 1n) return toHold(row);
      // A concurrent hold on the same reference won: give back what we reserved and answer with its hold.
      await this.moveHeld(scope, workspaceId, -amount);
      return this.mustFindHold(scope, workspaceId, input.reference);
    });
  }

  async capture(
    workspaceId: string,
    input: { reference: string; amountPaise: number; description?: string },
  ): Promise<HoldRecord> {
    const requested = amountOf(input.amountPaise, true);
    return this.scope.transaction(async (scope) => {
      const hold = await this.findHold(scope, workspaceId, input.reference, true);
      if (!hold) throw new UnknownHoldError(input.reference);
      if (hold.status !== 'held') return hold;
      const charge = Math.min(requested, hold.amountPaise);
      const settled = await this.settle(scope, hold, 'captured', charge);
      if (!settled) return this.mustFindHold(scope, workspaceId, input.reference);
      const account = await scope.db
        .updateTable('wallet_accounts')
        .set((eb) => ({
          balance_paise: eb('balance_paise', '-', charge),
          held_paise: eb('held_paise', '-', hold.amountPaise),
          updated_at: scope.now,
        }))
        .where('workspace_id', '=', workspaceId)
        .returning('balance_paise')
        .executeTakeFirstOrThrow();
      if (charge > 0) {
        await scope.db
          .insertInto('wallet_ledger')
          .values(
            this.entryRow(scope, {
              workspaceId,
              kind: hold.kind,
              amount: -charge,
              balanceAfter: account.balance_paise,
              reference: hold.reference,
              description: input.description,
            }),
          )
          .execute();
      }
      return settled;
    });
  }

  async release(workspaceId: string, reference: string): Promise<HoldRecord | undefined> {
    return this.scope.transaction(async (scope) => {
      const hold = await this.findHold(scope, workspaceId, reference, true);
      if (hold?.status !== 'held') return hold;
      const settled = await this.settle(scope, hold, 'released', 0);
      if (!settled) return this.mustFindHold(scope, workspaceId, reference);
      await this.moveHeld(scope, workspaceId, -hold.amountPaise);
      return settled;
    });
  }

  async getHold(workspaceId: string, reference: string): Promise<HoldRecord | undefined> {
    return this.findHold(this.scope, workspaceId, reference);
  }

  async transactions(
    workspaceId: string,
    options: { limit: number; after?: string },
  ): Promise<Page<LedgerEntry>> {
    const limit = assertLimit(options.limit);
    const after = options.after;
    const rows = await this.scope.db
      .selectFrom('wallet_ledger')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .$if(after !== undefined, (q) => q.where('id', '<', after ?? ''))
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    return toPage(rows, limit, toEntry);
  }

  private async balanceIn(scope: Scope, workspaceId: string): Promise<WalletBalance> {
    const row = await scope.db
      .selectFrom('wallet_accounts')
      .select(['balance_paise', 'held_paise'])
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirst();
    const balancePaise = row?.balance_paise ?? 0;
    const heldPaise = row?.held_paise ?? 0;
    return { balancePaise, heldPaise, availablePaise: balancePaise - heldPaise };
  }

  private async refuse(scope: Scope, workspaceId: string, amount: number): Promise<never> {
    const { availablePaise } = await this.balanceIn(scope, workspaceId);
    throw new InsufficientBalanceError(amount, availablePaise);
  }

  /** Adds `delta` to the balance; returns the balance after. */
  private async moveBalance(scope: Scope, workspaceId: string, delta: number): Promise<number> {
    const row = await scope.db
      .updateTable('wallet_accounts')
      .set((eb) => ({ balance_paise: eb('balance_paise', '+', delta), updated_at: scope.now }))
      .where('workspace_id', '=', workspaceId)
      .returning('balance_paise')
      .executeTakeFirstOrThrow();
    return row.balance_paise;
  }

  private async moveHeld(scope: Scope, workspaceId: string, delta: number): Promise<void> {
    await scope.db
      .updateTable('wallet_accounts')
      .set((eb) => ({ held_paise: eb('held_paise', '+', delta), updated_at: scope.now }))
      .where('workspace_id', '=', workspaceId)
      .execute();
  }

  /** Marks a held hold settled; undefined when another settlement got there first. */
  private async settle(
    scope: Scope,
    hold: HoldRecord,
    status: 'captured' | 'released',
    captured: number,
  ): Promise<HoldRecord | undefined> {
    const now = scope.now;
    const result = await scope.db
      .updateTable('wallet_holds')
      .set({ status, captured_paise: captured, settled_at: now })
      .where('workspace_id', '=', hold.workspaceId)
      .where('reference', '=', hold.reference)
      .where('status', '=', 'held')
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return undefined;
    return { ...hold, status, capturedPaise: captured, settledAt: now };
  }

  /**
   * Appends a ledger entry whose account update is already done. When a concurrent operation with the same
   * (workspace, kind, reference) committed first, `undo` reverses our account update and its entry is returned.
   */
  private async append(scope: Scope, entry: EntryInput, undo: () => Promise<unknown>): Promise<LedgerEntry> {
    const row = this.entryRow(scope, entry);
    const inserted = await scope.db
      .insertInto('wallet_ledger')
      .values(row)
      .onConflict((oc) => oc.columns(['workspace_id', 'kind', 'reference']).doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows === 1n) return toEntry(row);
    await undo();
    const existing = await this.findEntry(scope, entry.workspaceId, entry.kind, entry.reference);
    if (!existing) throw new Error(`ledger entry ${entry.kind} ${entry.reference} vanished`);
    return existing;
  }

  private entryRow(scope: Scope, entry: EntryInput): WalletLedgerTable {
    const now = scope.now;
    return {
      id: newId('transaction', now),
      workspace_id: entry.workspaceId,
      kind: entry.kind,
      amount_paise: entry.amount,
      balance_after_paise: entry.balanceAfter,
      reference: entry.reference,
      description: entry.description ?? DEFAULT_DESCRIPTIONS[entry.kind],
      created_at: now,
    };
  }

  private async findEntry(
    scope: Scope,
    workspaceId: string,
    kind: LedgerKind,
    reference: string,
  ): Promise<LedgerEntry | undefined> {
    const row = await scope.db
      .selectFrom('wallet_ledger')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', kind)
      .where('reference', '=', reference)
      .executeTakeFirst();
    return row ? toEntry(row) : undefined;
  }

  /** `lock` takes the row lock on PostgreSQL, so concurrent settlements of one hold run one after the other. */
  private async findHold(
    scope: Scope,
    workspaceId: string,
    reference: string,
    lock = false,
  ): Promise<HoldRecord | undefined> {
    const row = await scope.db
      .selectFrom('wallet_holds')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('reference', '=', reference)
      .$if(lock && scope.isPostgres, (q) => q.forUpdate())
      .executeTakeFirst();
    return row ? toHold(row) : undefined;
  }

  private async mustFindHold(scope: Scope, workspaceId: string, reference: string): Promise<HoldRecord> {
    const hold = await this.findHold(scope, workspaceId, reference);
    if (!hold) throw new UnknownHoldError(reference);
    return hold;
  }
}

function described(input: { reference: string; description?: string | undefined }) {
  return { reference: input.reference, description: input.description };
}

interface EntryInput {
  workspaceId: string;
  kind: LedgerKind;
  /** Signed: positive credits, negative debits. */
  amount: number;
  balanceAfter: number;
  reference: string;
  description?: string | undefined;
}
