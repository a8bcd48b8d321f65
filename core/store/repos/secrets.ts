import { randomToken, rowId, sameDigest, sha256Hex } from '../keys.ts';
import type { Scope } from '../scope.ts';
import type { SecretRepo, V1Credentials, WebhookSecret } from '../types.ts';

const WEBHOOK_SECRET_PREFIX = 'whsec_';
const WEBHOOK_SECRET_HEX = 48;
const V1_PUBLIC_PREFIX = 'pk_';
const V1_PUBLIC_HEX = 32;
const V1_PRIVATE_PREFIX = 'sk_v1_';
const V1_PRIVATE_HEX = 48;

/** Webhook signing secrets (kept in clear: the dispatcher signs with them) and legacy v1 credentials. */
export class SecretStore implements SecretRepo {
  constructor(private readonly scope: Scope) {}

  /** The workspace's current secret when it has one, else a new one. */
  async createWebhookSecret(workspaceId: string): Promise<string> {
    return this.scope.transaction(async (scope) => {
      const current = await scope.db
        .selectFrom('webhook_secrets')
        .select('secret')
        .where('workspace_id', '=', workspaceId)
        .where('expires_at', 'is', null)
        .orderBy('id', 'desc')
        .executeTakeFirst();
      return current ? current.secret : this.insertSecret(scope, workspaceId);
    });
  }

  async webhookSecrets(workspaceId: string): Promise<WebhookSecret[]> {
    const now = this.scope.now;
    const rows = await this.scope.db
      .selectFrom('webhook_secrets')
      .select(['secret', 'created_at', 'expires_at'])
      .where('workspace_id', '=', workspaceId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => ({ secret: r.secret, createdAt: r.created_at, expiresAt: r.expires_at }));
  }

  /** Every secret still valid later than `now + overlapMs` now expires then; the new one has no expiry. */
  async rotateWebhookSecret(workspaceId: string, overlapMs: number): Promise<string> {
    if (!Number.isSafeInteger(overlapMs) || overlapMs < 0) throw new RangeError('overlapMs must be >= 0');
    return this.scope.transaction(async (scope) => {
      const until = scope.now + overlapMs;
      await scope.db
        .updateTable('webhook_secrets')
        .set({ expires_at: until })
        .where('workspace_id', '=', workspaceId)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', until)]))
        .execute();
      return this.insertSecret(scope, workspaceId);
    });
  }

  async createV1Credentials(workspaceId: string): Promise<{ publicKey: string; privateKey: string }> {
    const publicKey = randomToken(V1_PUBLIC_PREFIX, V1_PUBLIC_HEX);
    const privateKey = randomToken(V1_PRIVATE_PREFIX, V1_PRIVATE_HEX);
    await this.scope.db
      .insertInto('v1_credentials')
      .values({
        public_key: publicKey,
        workspace_id: workspaceId,
        private_key_hash: sha256Hex(privateKey),
        created_at: this.scope.now,
      })
      .execute();
    return { publicKey, privateKey };
  }

  async verifyV1Credentials(publicKey: string, privateKey: string): Promise<V1Credentials | undefined> {
    const row = await this.scope.db
      .selectFrom('v1_credentials')
      .select(['workspace_id', 'public_key', 'private_key_hash'])
      .where('public_key', '=', publicKey)
      .executeTakeFirst();
    // Hash even when the public key is unknown, so the answer takes the same time either way.
    const presented = sha256Hex(privateKey);
    if (!row || !sameDigest(row.private_key_hash, presented)) return undefined;
    return { workspaceId: row.workspace_id, publicKey: row.public_key };
  }

  private async insertSecret(scope: Scope, workspaceId: string): Promise<string> {
    const now = scope.now;
    const secret = randomToken(WEBHOOK_SECRET_PREFIX, WEBHOOK_SECRET_HEX);
    await scope.db
      .insertInto('webhook_secrets')
      .values({ id: rowId(now), workspace_id: workspaceId, secret, created_at: now, expires_at: null })
      .execute();
    return secret;
  }
}
