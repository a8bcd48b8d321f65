import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  addMonths,
  defaultPace,
  HOUR_MS,
  healthState,
  isIndianNumber,
  nextFreeAt,
  numberPace,
  smoothedAnswerRate,
} from './rules.ts';

const T0 = Date.UTC(2026, 0, 15, 10, 20);

describe('telephony rules', () => {
  it('accepts +91 and ten digits only', () => {
    assert.ok(isIndianNumber('+918012345678'));
    for (const bad of ['+14155550100', '+91801234567', '+9180123456789', '+910123456789', '918012345678']) {
      assert.ok(!isIndianNumber(bad), bad);
    }
  });

  it('paces support pools at 40 and the rest at 60; warming numbers at half, at least one', () => {
    assert.equal(defaultPace('support'), 40);
    for (const purpose of ['outreach', 'reminders', 'other'] as const) assert.equal(defaultPace(purpose), 60);
    assert.equal(numberPace(60, 'warming'), 30);
    assert.equal(numberPace(1, 'warming'), 1);
    assert.equal(numberPace(5, 'warming'), 2);
    assert.equal(numberPace(60, 'active'), 60);
  });

  it('shows a number warming in its first week, resting until its rest ends, and what the owner set', () => {
    const base = { health: 'active' as const, restingUntil: null, warmingUntil: T0 + 1000 };
    assert.equal(healthState(base, T0), 'warming');
    assert.equal(healthState(base, T0 + 1000), 'active');
    assert.equal(healthState({ ...base, health: 'resting', restingUntil: T0 + 5 }, T0), 'resting');
    assert.equal(healthState({ ...base, health: 'resting', restingUntil: T0 + 5 }, T0 + 5), 'warming');
    assert.equal(healthState({ ...base, health: 'resting', restingUntil: null }, T0 + 10_000), 'resting');
    assert.equal(healthState({ ...base, health: 'cooling' }, T0), 'cooling');
    assert.equal(healthState({ ...base, health: 'retired' }, T0), 'retired');
  });

  it('ranks a number without calls between a good and a bad one', () => {
    assert.ok(smoothedAnswerRate(9, 10) > smoothedAnswerRate(0, 0));
    assert.ok(smoothedAnswerRate(0, 0) > smoothedAnswerRate(1, 10));
  });

  it('renews three calendar months on, on the same day or the last of a shorter month', () => {
    assert.equal(addMonths(Date.UTC(2026, 0, 15, 10), 3), Date.UTC(2026, 3, 15, 10));
    assert.equal(addMonths(Date.UTC(2026, 10, 30), 3), Date.UTC(2027, 1, 28));
    assert.equal(addMonths(Date.UTC(2026, 7, 31), 1), Date.UTC(2026, 8, 30));
  });

  it('frees a busy pool at the next hour, or when the first rest ends', () => {
    const hourEnds = Math.floor(T0 / HOUR_MS) * HOUR_MS + HOUR_MS;
    const atPace = { id: 'a', state: 'active' as const, restingUntil: null, count: 5, limit: 5 };
    assert.equal(nextFreeAt([atPace], T0), hourEnds);
    const resting = { id: 'b', state: 'resting' as const, restingUntil: T0 + 60_000, count: 0, limit: 5 };
    assert.equal(nextFreeAt([atPace, resting], T0), T0 + 60_000);
    assert.equal(
      nextFreeAt([{ ...resting, count: 5 }], T0),
      hourEnds,
      'at its pace too: the later of the two',
    );
    const long = { ...resting, restingUntil: hourEnds + 5, count: 5 };
    assert.equal(nextFreeAt([long], T0), hourEnds + 5, 'a rest past the hour: its end');
    assert.equal(nextFreeAt([{ ...resting, restingUntil: null }], T0), undefined);
  });
});
