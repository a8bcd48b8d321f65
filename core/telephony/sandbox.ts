import { createHash, randomUUID } from 'node:crypto';
import {
  type AvailableNumber,
  type BusinessDocuments,
  type NumberTypeRequirements,
  type Review,
  type TelephonyProvider,
  TelephonyProviderError,
} from './provider.ts';

/** The simulated inventory's areas: STD code and city. */
const AREAS: ReadonlyArray<{ code: string; region: string }> = [
  { code: '11', region: 'Delhi' },
  { code: '20', region: 'Pune' },
  { code: '22', region: 'Mumbai' },
  { code: '33', region: 'Kolkata' },
  { code: '40', region: 'Hyderabad' },
  { code: '44', region: 'Chennai' },
  { code: '79', region: 'Ahmedabad' },
  { code: '80', region: 'Bengaluru' },
];

const PER_AREA = 10;

/** Digits drawn from a hash, so the inventory is the same on every node and every run. */
function digits(seed: string, count: number): string {
  const hex = createHash('sha256').update(seed).digest('hex');
  let out = '';
  for (let i = 0; out.length < count; i++)
    out += (Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16) % 10).toString();
  return out;
}

/**
 * Every number the sandbox has for rent: ten local numbers per area and ten mobile numbers, the i-th of each
 * group ending in digit i (so each sandbox behaviour keyed on the last digit has numbers to try).
 */
function inventory(): AvailableNumber[] {
  const numbers: AvailableNumber[] = [];
  for (const { code, region } of AREAS) {
    for (let i = 0; i < PER_AREA; i++) {
      const subscriberLength = 10 - code.length;
      const body = `${2 + (i % 5)}${digits(`${code}:${i}`, subscriberLength - 2)}${i}`;
      numbers.push({ number: `+91${code}${body}`, type: 'local', area: code, region });
    }
  }
  for (let i = 0; i < PER_AREA; i++) {
    numbers.push({
      number: `+919${digits(`mobile:${i}`, 8)}${i}`,
      type: 'mobile',
      area: null,
      region: 'India',
    });
  }
  return numbers;
}

const REQUIRED_DOCUMENTS = [
  {
    type: 'business_registration',
    description: 'Certificate of incorporation or registration of the business',
  },
  { type: 'gst_certificate', description: 'GST registration certificate' },
  {
    type: 'authorised_signatory_id',
    description: 'Government photo ID of the person signing for the business',
  },
  {
    type: 'address_proof',
    description: 'Utility bill or lease for the business address, under 3 months old',
  },
];

const REVIEW_PREFIX = 'sandbox-review';

/**
 * The sandbox provider: a simulated inventory of +91 numbers, reviews that approve on the first refresh (a
 * business whose name contains "reject" is rejected, to try that path), rentals and incoming setup that always
 * work except for numbers ending in 5, whose incoming setup fails. It keeps no state: a review's verdict travels
 * in its reference, so every node of a deployment answers alike.
 */
export class SandboxTelephony implements TelephonyProvider {
  readonly name = 'sandbox';
  private readonly numbers = inventory();

  requirements(): NumberTypeRequirements[] {
    return [
      { type: 'local', documents: REQUIRED_DOCUMENTS, address_in_area: true },
      { type: 'mobile', documents: REQUIRED_DOCUMENTS.slice(0, 3), address_in_area: false },
    ];
  }

  async submitDocuments(documents: BusinessDocuments): Promise<{ reference: string }> {
    const verdict = /reject/i.test(documents.business.name) ? 'rejected' : 'approved';
    return { reference: `${REVIEW_PREFIX}:${verdict}:${randomUUID()}` };
  }

  async review(reference: string): Promise<Review> {
    const [prefix, verdict] = reference.split(':');
    if (prefix !== REVIEW_PREFIX) throw new TelephonyProviderError(`unknown review ${reference}`);
    if (verdict === 'approved') return { status: 'approved', reasons: [] };
    return {
      status: 'rejected',
      reasons: [
        'business_registration: the registration number does not match the business name (sandbox: names containing "reject" are rejected)',
      ],
    };
  }

  async search(query: { area?: string; contains?: string }): Promise<AvailableNumber[]> {
    return this.numbers.filter(
      (n) =>
        (query.area === undefined || n.area === query.area) &&
        (query.contains === undefined || n.number.slice(3).includes(query.contains)),
    );
  }

  async rent(number: string): Promise<{ reference: string }> {
    if (!this.numbers.some((n) => n.number === number)) {
      throw new TelephonyProviderError(`${number} is not for rent`);
    }
    return { reference: `sandbox-rental:${number}:${randomUUID()}` };
  }

  async release(_reference: string): Promise<void> {}

  async configureIncoming(_reference: string, number: string, url: string | null): Promise<void> {
    if (url !== null && number.endsWith('5')) {
      throw new TelephonyProviderError(
        'the provider refused the incoming-call address (sandbox: numbers ending in 5 always do)',
      );
    }
  }
}
