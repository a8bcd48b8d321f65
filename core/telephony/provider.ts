/**
 * A telephony provider: where numbers come from and what their calls ring through. The sandbox provider
 * (core/telephony/sandbox.ts) serves sandbox workspaces; production workspaces need one configured, and answer
 * `503 telephony_unavailable` on every telephony route without it. Placing a call stays with the dialer's
 * `Carrier` (core/calls/carrier.ts); this interface covers what the numbers' routes need.
 */

export type NumberType = 'local' | 'mobile';

export interface AvailableNumber {
  number: string;
  type: NumberType;
  /** The STD code of a local number; null for mobile numbers. */
  area: string | null;
  region: string;
}

export interface DocumentRequirement {
  type: string;
  description: string;
}

/** What the regulator asks before a number of a type can be rented. */
export interface NumberTypeRequirements {
  type: NumberType;
  documents: DocumentRequirement[];
  /** Whether the business address must be in the number's area. */
  address_in_area: boolean;
}

export interface BusinessDocuments {
  business: { name: string; registration_number: string; gstin?: string | undefined };
  address: { line1: string; line2?: string | undefined; city: string; state: string; postal_code: string };
  documents: Array<{ type: string; url: string }>;
}

export interface Review {
  status: 'pending' | 'approved' | 'rejected';
  reasons: string[];
}

export class TelephonyProviderError extends Error {
  override name = 'TelephonyProviderError';
}

export interface TelephonyProvider {
  readonly name: string;
  requirements(): NumberTypeRequirements[];
  /** Sends the documents for review; the reference reads the review back. */
  submitDocuments(documents: BusinessDocuments): Promise<{ reference: string }>;
  review(reference: string): Promise<Review>;
  /** Numbers for rent; `area` an STD code, `contains` digits the number contains. */
  search(query: { area?: string | undefined; contains?: string | undefined }): Promise<AvailableNumber[]>;
  /** Rents a number found by search; rejects with TelephonyProviderError when it is not for rent. */
  rent(number: string): Promise<{ reference: string }>;
  release(reference: string): Promise<void>;
  /**
   * Points the number's incoming calls at `url` (null: stops them); rejects with TelephonyProviderError,
   * whose message is the number's `setup_error`.
   */
  configureIncoming(reference: string, number: string, url: string | null): Promise<void>;
}
