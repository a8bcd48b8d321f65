/** The default price table in paise, and the call cost rules: per started second, rounded up to the paisa. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  callCostPaise,
  callWorstCasePaise,
  DEFAULT_PRICES,
  defaultPerMinutePaise,
  isTier,
  transcriptionCostPaise,
} from './prices.ts';

describe('prices', () => {
  it('prices tier tN at N rupees a minute', () => {
    assert.equal(defaultPerMinutePaise('t1'), 100);
    assert.equal(defaultPerMinutePaise('t3'), 300);
    assert.equal(defaultPerMinutePaise('t5'), 500);
    assert.throws(() => defaultPerMinutePaise('t0'), RangeError);
    assert.equal(isTier('t3'), true);
    assert.equal(isTier('T3'), false);
    assert.equal(isTier('t'), false);
  });

  it('has transcription at 1800 paise an hour and number rental at 150000 paise a quarter', () => {
    assert.equal(DEFAULT_PRICES.transcriptionPerHourPaise, 1_800);
    assert.equal(DEFAULT_PRICES.numberRentalPerQuarterPaise, 150_000);
    assert.equal(transcriptionCostPaise(3_600), 1_800);
    assert.equal(transcriptionCostPaise(1), 1);
    assert.equal(transcriptionCostPaise(0), 0);
  });

  it('holds the whole max duration and charges per started second, rounded up', () => {
    assert.equal(callWorstCasePaise('t3', 300), 1_500);
    assert.equal(callWorstCasePaise('t1', 1_800), 3_000);
    assert.equal(callWorstCasePaise('t5', 30), 250);
    assert.equal(callCostPaise('t1', 61), 102);
    assert.equal(callCostPaise('t3', 0.2), 5);
    assert.equal(callCostPaise('t3', 60), 300);
    assert.equal(callCostPaise('t3', 0), 0);
    assert.throws(() => callCostPaise('t3', -1), RangeError);
    for (let s = 0; s <= 300; s++) assert.ok(callCostPaise('t3', s) <= callWorstCasePaise('t3', 300));
  });
});
