import { storedSettings } from '../agents/stored.ts';
import { ApiError, notFound } from '../errors.ts';
import type { Page, PhonePoolRecord, PoolPurpose, Repositories, Store } from '../store/types.ts';
import type { TelephonyProviders } from './providers.ts';
import { poolPace } from './rules.ts';

/** Numbers a pool may hold. */
export const POOL_LIMITS = { numbers: 100, maxPerHour: { min: 1, max: 1_000 } } as const;

export interface PoolView {
  record: PhonePoolRecord;
  /** The pace per number and hour in effect (the purpose's starting pace unless set). */
  maxPerHour: number;
  numberIds: string[];
}

export interface PoolInput {
  name: string;
  purpose: PoolPurpose;
  maxPerHour?: number | null | undefined;
  defaultForCampaigns?: boolean | undefined;
  numberIds: string[];
}

export type PoolPatch = Partial<PoolInput>;

/**
 * Phone pools: a name, a purpose, a pace and the workspace's numbers it rings from. A number belongs to one
 * pool at most; one pool at most is the campaigns' default. A pool an agent calls from is not deleted.
 */
export class PoolService {
  constructor(
    private readonly store: Store,
    private readonly providers: TelephonyProviders,
  ) {}

  async create(workspaceId: string, input: PoolInput): Promise<PoolView> {
    await this.providers.forWorkspace(workspaceId);
    return this.store.transaction(async (repos) => {
      const pool = await repos.phonePools.create(workspaceId, {
        name: input.name,
        purpose: input.purpose,
        maxPerHour: input.maxPerHour ?? null,
        defaultForCampaigns: input.defaultForCampaigns ?? false,
      });
      await this.setNumbers(repos, workspaceId, pool.id, input.numberIds);
      if (pool.defaultForCampaigns) await repos.phonePools.clearDefault(workspaceId, pool.id);
      return view(pool, input.numberIds);
    });
  }

  async get(workspaceId: string, id: string): Promise<PoolView> {
    await this.providers.forWorkspace(workspaceId);
    const pool = await this.store.phonePools.get(workspaceId, id);
    if (!pool) throw notFound(`phone pool ${id}`);
    return this.viewOf(this.store, pool);
  }

  async list(workspaceId: string, options: { limit: number; after?: string }): Promise<Page<PoolView>> {
    await this.providers.forWorkspace(workspaceId);
    const page = await this.store.phonePools.list(workspaceId, options);
    return {
      items: await Promise.all(page.items.map((p) => this.viewOf(this.store, p))),
      hasMore: page.hasMore,
    };
  }

  async update(workspaceId: string, id: string, patch: PoolPatch): Promise<PoolView> {
    await this.providers.forWorkspace(workspaceId);
    return this.store.transaction(async (repos) => {
      const pool = await repos.phonePools.update(workspaceId, id, {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.purpose !== undefined ? { purpose: patch.purpose } : {}),
        ...(patch.maxPerHour !== undefined ? { maxPerHour: patch.maxPerHour } : {}),
        ...(patch.defaultForCampaigns !== undefined
          ? { defaultForCampaigns: patch.defaultForCampaigns }
          : {}),
      });
      if (!pool) throw notFound(`phone pool ${id}`);
      if (patch.numberIds !== undefined) await this.setNumbers(repos, workspaceId, id, patch.numberIds);
      if (patch.defaultForCampaigns) await repos.phonePools.clearDefault(workspaceId, id);
      return this.viewOf(repos, pool);
    });
  }

  /** Deletes the pool; its numbers stay the workspace's. `409 pool_in_use` while a campaign or an agent calls from it. */
  async remove(workspaceId: string, id: string): Promise<void> {
    await this.providers.forWorkspace(workspaceId);
    await this.store.transaction(async (repos) => {
      if (!(await repos.phonePools.get(workspaceId, id))) throw notFound(`phone pool ${id}`);
      const agents = await agentsCallingFrom(repos, workspaceId, id);
      const campaigns = await repos.campaigns.usingPool(workspaceId, id);
      if (agents.length + campaigns.length > 0) {
        const users = [
          ...(campaigns.length > 0 ? [`campaigns ${campaigns.join(', ')}`] : []),
          ...(agents.length > 0 ? [`agents ${agents.join(', ')}`] : []),
        ];
        throw new ApiError(
          'pool_in_use',
          `phone pool ${id} is still called from by ${users.join(' and ')}; move them to another pool or number first`,
        );
      }
      await repos.phoneNumbers.setPool(workspaceId, id, []);
      await repos.phonePools.remove(workspaceId, id);
    });
  }

  /** Whether the workspace has the pool (agents' `calls_from` is checked against it). */
  async exists(workspaceId: string, id: string): Promise<boolean> {
    return (await this.store.phonePools.get(workspaceId, id)) !== undefined;
  }

  private async setNumbers(repos: Repositories, workspaceId: string, poolId: string, ids: string[]) {
    const unique = [...new Set(ids)];
    const found = await repos.phoneNumbers.many(workspaceId, unique);
    const missing = unique.filter((id) => !found.some((n) => n.id === id));
    if (missing.length > 0) throw notFound(`number_ids: phone number ${missing.join(', ')}`);
    const elsewhere = found.filter((n) => n.poolId !== null && n.poolId !== poolId);
    if (elsewhere.length > 0) {
      throw new ApiError(
        'conflict',
        `number_ids: ${elsewhere.map((n) => `${n.id} is in pool ${n.poolId}`).join('; ')}; a number belongs to one pool at most`,
      );
    }
    await repos.phoneNumbers.setPool(workspaceId, poolId, unique);
  }

  private async viewOf(repos: Pick<Repositories, 'phoneNumbers'>, pool: PhonePoolRecord): Promise<PoolView> {
    const numbers = await repos.phoneNumbers.inPool(pool.workspaceId, pool.id);
    return view(
      pool,
      numbers.map((n) => n.id),
    );
  }
}

const view = (record: PhonePoolRecord, numberIds: string[]): PoolView => ({
  record,
  maxPerHour: poolPace(record),
  numberIds: [...new Set(numberIds)].sort(),
});

/** The live agents whose `calls_from.pool_id` names the pool. */
async function agentsCallingFrom(
  repos: Pick<Repositories, 'agents'>,
  workspaceId: string,
  poolId: string,
): Promise<string[]> {
  const users: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await repos.agents.list(workspaceId, { limit: 100, ...(after ? { after } : {}) });
    for (const agent of page.items) {
      if (storedSettings(agent.content).calls_from?.pool_id === poolId) users.push(agent.id);
    }
    if (!page.hasMore) return users;
    after = page.items[page.items.length - 1]?.id;
  }
}
