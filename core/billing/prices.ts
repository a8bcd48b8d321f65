import { assertPaise, costForSeconds, type Paise } from '../money.ts';

/**
 * The default price table (docs/architecture.md, "Money and events"), in integer paise. Deployments may configure another
 * table of the same shape.
 */
export type Tier = `t${number}`;

export interface PriceTable {
  /** Per-minute call rate of a tier; tier `tN` costs N rupees a minute by default. */
  perMinutePaise(tier: Tier): Paise;
  /** Transcription, per hour of audio. */
  readonly transcriptionPerHourPaise: Paise;
  /** Number rental, charged every quarter (three months). */
  readonly numberRentalPerQuarterPaise: Paise;
}

const TIER = /^t([1-9][0-9]{0,2})$/;

export function isTier(value: string): value is Tier {
  return TIER.test(value);
}

/** `tN` -> N rupees -> N * 100 paise a minute. */
export function defaultPerMinutePaise(tier: Tier): Paise {
  const match = TIER.exec(tier);
  if (!match?.[1]) throw new RangeError(`unknown tier "${tier}" (expected t1, t3, t5, ...)`);
  return Number(match[1]) * 100;
}

export const DEFAULT_PRICES: PriceTable = Object.freeze({
  perMinutePaise: defaultPerMinutePaise,
  transcriptionPerHourPaise: 1_800,
  numberRentalPerQuarterPaise: 150_000,
});

function nonNegativeSeconds(seconds: number, what: string): number {
  if (!Number.isFinite(seconds) || seconds < 0) throw new RangeError(`${what} must be zero or more seconds`);
  return seconds;
}

/** What a call can cost at most: its whole `maxDurationSecs` at the tier's rate (the admission hold). */
export function callWorstCasePaise(tier: Tier, maxDurationSecs: number, prices = DEFAULT_PRICES): Paise {
  return assertPaise(
    costForSeconds(nonNegativeSeconds(maxDurationSecs, 'maxDurationSecs'), prices.perMinutePaise(tier)),
  );
}

/** What a call of `seconds` costs: billed per started second, rounded up to the paisa. */
export function callCostPaise(tier: Tier, seconds: number, prices = DEFAULT_PRICES): Paise {
  return assertPaise(costForSeconds(nonNegativeSeconds(seconds, 'seconds'), prices.perMinutePaise(tier)));
}

/** Transcription of `audioSeconds` of audio, per started second, rounded up to the paisa. */
export function transcriptionCostPaise(audioSeconds: number, prices = DEFAULT_PRICES): Paise {
  const started = Math.ceil(nonNegativeSeconds(audioSeconds, 'audioSeconds'));
  return assertPaise(Math.ceil((started * prices.transcriptionPerHourPaise) / 3_600));
}
