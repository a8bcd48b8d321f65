import { request } from 'undici';
import type { SecretCipher } from '../secrets/cipher.ts';
import type { PhoneNumberRecord } from '../store/types.ts';
import {
  type AvailableNumber,
  type NumberTypeRequirements,
  type Review,
  type TelephonyProvider,
  TelephonyProviderError,
} from './provider.ts';

/**
 * A customer's own Twilio account, for the numbers imported from it: the IncomingPhoneNumbers REST resource at
 * `TWILIO_API_BASE` (find a number, point its incoming calls at us, put its old address back). The account's
 * credentials are kept sealed on the number's row; the auth token never reaches a log or an error message.
 */

export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
}

/** A number of the account as Twilio lists it. */
export interface TwilioIncomingNumber {
  sid: string;
  voiceUrl: string | null;
}

/** Credentials Twilio refused (401): the import's fault, not the provider's. */
export class TwilioCredentialsError extends TelephonyProviderError {
  override name = 'TwilioCredentialsError';
}

const API_VERSION = '2010-04-01';
const REQUEST_TIMEOUT_MS = 10_000;
/** The longest body of Twilio's we read; a number's JSON is about 3 kB. */
const MAX_BODY_CHARS = 200_000;
const SEALED_NAME = 'twilio-credentials';

export class TwilioAccounts {
  private readonly apiBase: string;

  constructor(
    apiBase: string,
    private readonly cipher: SecretCipher,
  ) {
    this.apiBase = apiBase.replace(/\/+$/, '');
  }

  /** The credentials sealed for one number of one workspace: they open on that row only. */
  seal(credentials: TwilioCredentials, workspaceId: string, numberId: string): string {
    return this.cipher.seal(JSON.stringify(credentials), workspaceId, `${SEALED_NAME}:${numberId}`);
  }

  open(record: Pick<PhoneNumberRecord, 'id' | 'workspaceId' | 'providerSecret'>): TwilioCredentials {
    if (record.providerSecret === null) throw new Error(`phone number ${record.id} has no credentials`);
    const value: unknown = JSON.parse(
      this.cipher.open(record.providerSecret, record.workspaceId, `${SEALED_NAME}:${record.id}`),
    );
    const { accountSid, authToken } = (value ?? {}) as Partial<TwilioCredentials>;
    if (typeof accountSid !== 'string' || typeof authToken !== 'string')
      throw new Error(`phone number ${record.id}: sealed credentials of an unknown shape`);
    return { accountSid, authToken };
  }

  /** The account's number `number` (E.164), undefined when the account has no such number. */
  async find(credentials: TwilioCredentials, number: string): Promise<TwilioIncomingNumber | undefined> {
    const query = new URLSearchParams({ PhoneNumber: number });
    const body = await this.call(credentials, 'GET', `/IncomingPhoneNumbers.json?${query}`);
    const list = body.incoming_phone_numbers;
    if (!Array.isArray(list)) throw new TelephonyProviderError('Twilio answered without a number list');
    const found = (list as unknown[]).find(
      (n): n is Record<string, unknown> =>
        typeof n === 'object' && n !== null && (n as Record<string, unknown>).phone_number === number,
    );
    if (!found || typeof found.sid !== 'string') return undefined;
    return { sid: found.sid, voiceUrl: typeof found.voice_url === 'string' ? found.voice_url : null };
  }

  /** Points the number's incoming calls (and their status callbacks) at `voiceUrl`; null clears them. */
  async pointAt(
    credentials: TwilioCredentials,
    sid: string,
    voiceUrl: string | null,
    statusCallback: string | null,
  ): Promise<void> {
    const form = new URLSearchParams({
      VoiceUrl: voiceUrl ?? '',
      VoiceMethod: 'POST',
      StatusCallback: statusCallback ?? '',
      StatusCallbackMethod: 'POST',
    });
    await this.call(credentials, 'POST', `/IncomingPhoneNumbers/${encodeURIComponent(sid)}.json`, form);
  }

  /** The provider of one imported number: incoming setup and release through its own account. */
  providerFor(record: PhoneNumberRecord, statusCallbackOf: (voiceUrl: string) => string): TelephonyProvider {
    return new TwilioNumberProvider(this, this.open(record), record.previousVoiceUrl, statusCallbackOf);
  }

  private async call(
    credentials: TwilioCredentials,
    method: 'GET' | 'POST',
    path: string,
    form?: URLSearchParams,
  ): Promise<Record<string, unknown>> {
    const scrub = (text: string) => text.split(credentials.authToken).join('[redacted]');
    const url = `${this.apiBase}/${API_VERSION}/Accounts/${encodeURIComponent(credentials.accountSid)}${path}`;
    let status: number;
    let text: string;
    try {
      const response = await request(url, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64')}`,
          accept: 'application/json',
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { body: form.toString() } : {}),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      status = response.statusCode;
      text = (await response.body.text()).slice(0, MAX_BODY_CHARS);
    } catch (error) {
      throw new TelephonyProviderError(
        scrub(`Twilio could not be reached: ${error instanceof Error ? error.message : String(error)}`),
      );
    }
    const body = parseObject(text);
    if (status === 401) {
      throw new TwilioCredentialsError('Twilio refused the account SID and auth token');
    }
    if (status < 200 || status >= 300 || !body) {
      const message = typeof body?.message === 'string' ? body.message : `HTTP ${status}`;
      const code = typeof body?.code === 'number' ? ` (error ${body.code})` : '';
      throw new TelephonyProviderError(scrub(`Twilio refused the request: ${message}${code}`.slice(0, 500)));
    }
    return body;
  }
}

/**
 * An imported number's provider. Turning incoming calls on points the number at us; turning them off, or
 * releasing the number (its delete), puts back the address it had when it was imported.
 */
class TwilioNumberProvider implements TelephonyProvider {
  readonly name = 'twilio';

  constructor(
    private readonly accounts: TwilioAccounts,
    private readonly credentials: TwilioCredentials,
    private readonly previousVoiceUrl: string | null,
    private readonly statusCallbackOf: (voiceUrl: string) => string,
  ) {}

  async configureIncoming(reference: string, _number: string, url: string | null): Promise<void> {
    if (url === null) return this.release(reference);
    await this.accounts.pointAt(this.credentials, reference, url, this.statusCallbackOf(url));
  }

  async release(reference: string): Promise<void> {
    await this.accounts.pointAt(this.credentials, reference, this.previousVoiceUrl, null);
  }

  requirements(): NumberTypeRequirements[] {
    return [];
  }
  submitDocuments(): Promise<{ reference: string }> {
    return Promise.reject(new TelephonyProviderError('imported numbers need no documents'));
  }
  review(): Promise<Review> {
    return Promise.reject(new TelephonyProviderError('imported numbers have no review'));
  }
  async search(): Promise<AvailableNumber[]> {
    return [];
  }
  rent(): Promise<{ reference: string }> {
    return Promise.reject(new TelephonyProviderError('imported numbers are not rented'));
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
