import type { SecretCipher } from '../secrets/cipher.ts';
import type { Store } from '../store/types.ts';

const SEAL_NAME = (publicKey: string) => `v1-private-key:${publicKey}`;

/**
 * The organization private keys v1 webhooks are signed with. The store keeps a private key hashed (to verify
 * requests) and, once a request has proved it, sealed under the deployment key (to sign): v1 calls are placed by
 * such requests, so every call that has v1 webhooks has its key sealed by then.
 */
export class V1Keys {
  constructor(
    private readonly store: Store,
    private readonly cipher: SecretCipher,
  ) {}

  /** Seals a private key a request just proved, unless it is sealed already. */
  async remember(publicKey: string, workspaceId: string, privateKey: string): Promise<void> {
    if (await this.store.v1.sealedPrivateKey(publicKey)) return;
    await this.store.v1.sealPrivateKey(
      publicKey,
      this.cipher.seal(privateKey, workspaceId, SEAL_NAME(publicKey)),
    );
  }

  async privateKeyOf(publicKey: string): Promise<string | undefined> {
    const row = await this.store.v1.sealedPrivateKey(publicKey);
    return row ? this.cipher.open(row.sealed, row.workspaceId, SEAL_NAME(publicKey)) : undefined;
  }
}
