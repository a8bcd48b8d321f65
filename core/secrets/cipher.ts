import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Fixed salt and context: the same SECRET_KEY always derives the same key, and no other use shares it. */
const HKDF_SALT = 'voiceagent tool secrets';
const HKDF_INFO = 'aes-256-gcm v1';

/**
 * Seals tool secret values with AES-256-GCM under a key derived from the deployment's SECRET_KEY by HKDF-SHA256,
 * a fresh random nonce per record. The workspace and secret name are bound in as associated data, so a sealed
 * value copied onto another row does not open. Envelope: `v1.<base64url(nonce | tag | ciphertext)>`.
 */
export class SecretCipher {
  private readonly key: Buffer;

  constructor(secretKey: string) {
    if (secretKey.length < 16) throw new RangeError('SECRET_KEY must be at least 16 characters');
    this.key = Buffer.from(hkdfSync('sha256', secretKey, HKDF_SALT, HKDF_INFO, 32));
  }

  seal(value: string, workspaceId: string, name: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(associatedData(workspaceId, name));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  /** The clear value; throws when the envelope was altered, moved or sealed under another key. */
  open(sealed: string, workspaceId: string, name: string): string {
    const [version, payload] = sealed.split('.', 2);
    if (version !== VERSION || !payload) throw new Error('unknown secret envelope');
    const bytes = Buffer.from(payload, 'base64url');
    const nonce = bytes.subarray(0, NONCE_BYTES);
    const tag = bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, nonce);
    decipher.setAAD(associatedData(workspaceId, name));
    decipher.setAuthTag(tag);
    return Buffer.concat([
      decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  }
}

const associatedData = (workspaceId: string, name: string) => Buffer.from(`${workspaceId}\n${name}`, 'utf8');
