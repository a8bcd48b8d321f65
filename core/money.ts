/**
 * Money is integer paise everywhere inside the platform; rupees appear only at the API edge
 * (`amount_inr`, `per_min_inr`, wallet figures).
 */
export type Paise = number;

export function assertPaise(value: number, what = 'amount'): Paise {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${what} must be a whole number of paise`);
  return value;
}

/** Rupees (at most two decimals) to paise, exactly: parsed from the decimal text, not by float multiplication. */
export function rupeesToPaise(rupees: number): Paise {
  if (!Number.isFinite(rupees)) throw new RangeError('rupees must be a finite number');
  const text = rupees.toFixed(2);
  const negative = text.startsWith('-');
  const [whole, fraction = '00'] = (negative ? text.slice(1) : text).split('.');
  const paise = Number(whole) * 100 + Number(fraction);
  if (Math.abs(Math.round(rupees * 100) - (negative ? -paise : paise)) > 1) {
    throw new RangeError('rupees has more than two decimals');
  }
  return assertPaise(negative ? -paise : paise);
}

/** Paise to rupees as a JSON number (two decimals at most). */
export function paiseToRupees(paise: Paise): number {
  return Number((paise / 100).toFixed(2));
}

/** Cost of `seconds` of a call at `perMinutePaise`, billed per started second, rounded up to the paisa. */
export function costForSeconds(seconds: number, perMinutePaise: Paise): Paise {
  const started = Math.ceil(Math.max(0, seconds));
  return Math.ceil((started * perMinutePaise) / 60);
}
