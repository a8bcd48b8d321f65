import { newId } from '../../ids.ts';
import type { ApiKeysTable } from '../db.ts';
import { randomToken, sameDigest, sha256Hex } from '../keys.ts';
import type { Scope } from '../scope.ts';
import type { ApiKeyRecord, ApiKeyRepo } from '../types.ts';

export const API_KEY_PREFIX = 'sk_live_';
const API_KEY_HEX = 32;
/** Characters of the key kept in clear for operators: `sk_live_` and the first four hex digits. */
const SHOWN_PREFIX_CHARS = API_KEY_PREFIX.length + 4;
const API_KEY_SHAPE = /^sk_live_[0-9a-f]{32}$/;

function toRecord(row: ApiKeysTable): ApiKeyRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    prefix: row.prefix,
    revokedAt: row.revoked_at,
    createdAt: row.created_at,
  };
}

export class ApiKeyStore implements ApiKeyRepo {
  constructor(private readonly scope: Scope) {}

  async create(workspaceId: string): Promise<{ key: string; record: ApiKeyRecord }> {
    const now = this.scope.now;
    const key = randomToken(API_KEY_PREFIX, API_KEY_HEX);
    const row: ApiKeysTable = {
      id: newId('apiKey', now),
      workspace_id: workspaceId,
      key_hash: sha256Hex(key),
      prefix: key.slice(0, SHOWN_PREFIX_CHARS),
      revoked_at: null,
      created_at: now,
    };
    await this.scope.db.insertInto('api_keys').values(row).execute();
    return { key, record: toRecord(row) };
  }

  async findByKey(key: string): Promise<ApiKeyRecord | undefined> {
    if (!API_KEY_SHAPE.test(key)) return undefined;
    const hash = sha256Hex(key);
    const row = await this.scope.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', hash)
      .executeTakeFirst();
    return row && sameDigest(row.key_hash, hash) ? toRecord(row) : undefined;
  }

  async revoke(keyOrId: string): Promise<boolean> {
    const byKey = keyOrId.startsWith(API_KEY_PREFIX);
    const column = byKey ? 'key_hash' : 'id';
    const value = byKey ? sha256Hex(keyOrId) : keyOrId;
    return this.scope.transaction(async ({ db, now }) => {
      const row = await db.selectFrom('api_keys').select('id').where(column, '=', value).executeTakeFirst();
      if (!row) return false;
      await db
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('id', '=', row.id)
        .where('revoked_at', 'is', null)
        .execute();
      return true;
    });
  }

  /** Newest first. */
  async listForWorkspace(workspaceId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.scope.db
      .selectFrom('api_keys')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('id', 'desc')
      .execute();
    return rows.map(toRecord);
  }
}
