import type { StreamTokens, TokenVerdict } from './stream-tokens.ts';

/**
 * Stream tokens for live speech to text: the same signed, single-use tokens as media streams (stream-tokens.ts),
 * of kind `stt`, bound to a workspace instead of a call, and optionally to one language. The token's subject is
 * `<workspace id>` or `<workspace id>/<language>`.
 */
export const SPEECH_TOKEN_KIND = 'stt';

/** What a verified speech token grants. */
export interface SpeechTokenGrant {
  workspaceId: string;
  /** The only language the session may use, when the token was minted for one. */
  language: string | undefined;
  expiresAt: number;
}

export function mintSpeechToken(
  tokens: StreamTokens,
  input: { workspaceId: string; language?: string; ttlMs: number },
): string {
  const subject = input.language ? `${input.workspaceId}/${input.language}` : input.workspaceId;
  return tokens.mint(subject, SPEECH_TOKEN_KIND, input.ttlMs);
}

/** Verifies and claims a speech token (it is good once). */
export async function verifySpeechToken(
  tokens: StreamTokens,
  token: string | undefined,
): Promise<
  { ok: true; grant: SpeechTokenGrant } | { ok: false; reason: Exclude<TokenVerdict, { ok: true }>['reason'] }
> {
  const verdict = await tokens.verify(token, SPEECH_TOKEN_KIND);
  if (!verdict.ok) return { ok: false, reason: verdict.reason };
  const slash = verdict.callId.indexOf('/');
  const grant: SpeechTokenGrant =
    slash < 0
      ? { workspaceId: verdict.callId, language: undefined, expiresAt: verdict.expiresAt }
      : {
          workspaceId: verdict.callId.slice(0, slash),
          language: verdict.callId.slice(slash + 1),
          expiresAt: verdict.expiresAt,
        };
  return { ok: true, grant };
}
