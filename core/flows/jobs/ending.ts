/** Ending a flow job: its final state and its one `flow_generation` charge, in one transaction. */
import { InsufficientBalanceError, type Repositories, type Store } from '../../store/types.ts';
import { costPaise } from './pricing.ts';
import { type DraftState, type JobState, jobJson } from './stored.ts';

export type EndStatus = 'succeeded' | 'failed' | 'canceled';

/**
 * Ends a running job with `state` and charges its cost, rounded up to a paisa once, as one `flow_generation`
 * transaction whose reference is the job id. The ledger is idempotent on that reference, and the job ends only
 * while it runs, so a job is never charged twice whoever ends it. A wallet short of the cost pays what it has
 * (a balance never goes negative). False when the job had ended already (or another worker holds it).
 */
export async function endJob<S extends JobState | DraftState>(
  store: Store,
  job: { id: string; workspaceId: string },
  owner: string | null,
  status: EndStatus,
  state: S,
  description = `Flow test ${job.id}`,
): Promise<boolean> {
  return store.transaction(async (repos) => {
    const charge = await chargeFor(repos, job, costPaise(state.usage), description);
    const final: S = { ...state, charge };
    return repos.flowJobs.finish(job.id, owner, status, jobJson(final));
  });
}

async function chargeFor(
  repos: Repositories,
  job: { id: string; workspaceId: string },
  amountPaise: number,
  description: string,
): Promise<JobState['charge']> {
  if (amountPaise <= 0) return { amount_paise: 0, transaction_id: null };
  const debit = (amount: number) =>
    repos.wallet.debit(job.workspaceId, {
      amountPaise: amount,
      reference: job.id,
      kind: 'flow_generation',
      description,
    });
  try {
    const entry = await debit(amountPaise);
    return { amount_paise: -entry.amountPaise, transaction_id: entry.id };
  } catch (error) {
    if (!(error instanceof InsufficientBalanceError)) throw error;
    if (error.availablePaise <= 0) return { amount_paise: 0, transaction_id: null };
    const entry = await debit(error.availablePaise);
    return { amount_paise: -entry.amountPaise, transaction_id: entry.id };
  }
}
