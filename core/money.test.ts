import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { costForSeconds, paiseToRupees, rupeesToPaise } from './money.ts';

test('rupees to paise is exact for two-decimal amounts', () => {
  assert.equal(rupeesToPaise(0.1), 10);
  assert.equal(rupeesToPaise(0.29), 29);
  assert.equal(rupeesToPaise(1.005 + 0.005), 101);
  assert.equal(rupeesToPaise(1500), 150000);
  assert.equal(rupeesToPaise(-2.5), -250);
  fc.assert(fc.property(fc.integer({ min: -1e12, max: 1e12 }), (p) => rupeesToPaise(paiseToRupees(p)) === p));
});

test('paise to rupees', () => {
  assert.equal(paiseToRupees(8766), 87.66);
  assert.equal(paiseToRupees(5), 0.05);
  assert.equal(paiseToRupees(0), 0);
});

test('calls bill per started second, rounded up to the paisa', () => {
  assert.equal(costForSeconds(60, 300), 300);
  assert.equal(costForSeconds(1, 300), 5);
  assert.equal(costForSeconds(0.2, 300), 5, 'a started second counts');
  assert.equal(costForSeconds(61, 100), 102, '61 x 100 / 60 = 101.67 -> 102');
  assert.equal(costForSeconds(0, 500), 0);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1800 }), fc.integer({ min: 1, max: 1000 }), (s, rate) => {
      const cost = costForSeconds(s, rate);
      return cost >= (s * rate) / 60 && cost - (s * rate) / 60 < 1;
    }),
  );
});
