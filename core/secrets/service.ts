import { storedTools } from '../agents/stored.ts';
import { ApiError, notFound } from '../errors.ts';
import type { Store, ToolSecretRecord } from '../store/types.ts';
import { secretsOf } from '../tools/definition.ts';
import type { SecretCipher } from './cipher.ts';

export const SECRET_LIMITS = {
  /** Secrets per workspace. */
  perWorkspace: 100,
  /** Bytes of a value (UTF-8). */
  valueBytes: 4096,
} as const;

export const SECRET_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** A secret as the API shows it: never its value. */
export interface SecretInfo {
  name: string;
  createdAt: number;
  updatedAt: number;
}

const infoOf = (r: ToolSecretRecord): SecretInfo => ({
  name: r.name,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/**
 * The workspace's secrets for tool templates. Values go in sealed and come out only to the tool runner
 * (`reveal`); nothing else returns, logs or echoes them.
 */
export class SecretService {
  constructor(
    private readonly store: Store,
    private readonly cipher: SecretCipher,
  ) {}

  async create(workspaceId: string, name: string, value: string): Promise<SecretInfo> {
    checkValue(value);
    const result = await this.store.toolSecrets.create(
      workspaceId,
      name,
      this.cipher.seal(value, workspaceId, name),
      SECRET_LIMITS.perWorkspace,
    );
    if (result === 'exists') {
      throw new ApiError(
        'conflict',
        `secret "${name}" already exists; replace its value with PUT /v2/secrets/${name}`,
      );
    }
    if (result === 'full') {
      throw new ApiError(
        'conflict',
        `the workspace already holds ${SECRET_LIMITS.perWorkspace} secrets, the most it can; delete one first`,
      );
    }
    return infoOf(result);
  }

  async list(workspaceId: string, options: { limit: number; after?: string }) {
    const page = await this.store.toolSecrets.list(workspaceId, options);
    return { items: page.items.map(infoOf), hasMore: page.hasMore };
  }

  async get(workspaceId: string, name: string): Promise<SecretInfo> {
    const record = await this.store.toolSecrets.get(workspaceId, name);
    if (!record) throw notFound(`secret "${name}"`);
    return infoOf(record);
  }

  async replace(workspaceId: string, name: string, value: string): Promise<SecretInfo> {
    checkValue(value);
    const record = await this.store.toolSecrets.replace(
      workspaceId,
      name,
      this.cipher.seal(value, workspaceId, name),
    );
    if (!record) throw notFound(`secret "${name}"`);
    return infoOf(record);
  }

  /** Refused with `409 conflict` while a tool of a live agent uses the secret. */
  async remove(workspaceId: string, name: string): Promise<void> {
    if (!(await this.store.toolSecrets.get(workspaceId, name))) throw notFound(`secret "${name}"`);
    const users = await this.agentsUsing(workspaceId, name);
    if (users.length > 0) {
      const shown = users.slice(0, 10).join(', ');
      throw new ApiError(
        'conflict',
        `secret "${name}" is used by tools of agent${users.length > 1 ? 's' : ''} ${shown}${users.length > 10 ? ` and ${users.length - 10} more` : ''}; change those tools first`,
      );
    }
    if (!(await this.store.toolSecrets.remove(workspaceId, name))) throw notFound(`secret "${name}"`);
  }

  async names(workspaceId: string): Promise<Set<string>> {
    return new Set(await this.store.toolSecrets.names(workspaceId));
  }

  /** The clear values of the named secrets that exist, for one tool run. */
  async reveal(workspaceId: string, names: readonly string[]): Promise<Record<string, string>> {
    const records = await this.store.toolSecrets.many(workspaceId, names);
    return Object.fromEntries(records.map((r) => [r.name, this.cipher.open(r.sealed, workspaceId, r.name)]));
  }

  private async agentsUsing(workspaceId: string, name: string): Promise<string[]> {
    const users: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await this.store.agents.list(workspaceId, { limit: 100, ...(after ? { after } : {}) });
      for (const agent of page.items) {
        if (storedTools(agent).some((tool) => secretsOf(tool).includes(name))) users.push(agent.id);
      }
      if (!page.hasMore) return users;
      after = page.items[page.items.length - 1]?.id;
    }
  }
}

function checkValue(value: string): void {
  if (Buffer.byteLength(value, 'utf8') > SECRET_LIMITS.valueBytes) {
    throw new ApiError('invalid_request', `value: at most ${SECRET_LIMITS.valueBytes} bytes`);
  }
}
