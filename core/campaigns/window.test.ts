import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Slot } from './settings.ts';
import { isInsideSlots, nextOpening, wallClock } from './window.ts';

const at = (iso: string) => Date.parse(iso);
const weekdays: Slot = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:30', end: '18:00' };
const lateNight: Slot = { days: ['fri'], start: '22:00', end: '02:00' };

describe('calling hours', () => {
  test('read on the wall clock of the zone: Asia/Kolkata is UTC+05:30', () => {
    // Monday 2026-11-30 09:29 and 09:30 in Kolkata.
    assert.equal(isInsideSlots(at('2026-11-30T03:59:00Z'), 'Asia/Kolkata', [weekdays]), false);
    assert.equal(isInsideSlots(at('2026-11-30T04:00:00Z'), 'Asia/Kolkata', [weekdays]), true);
    // 18:00 is the end: closed.
    assert.equal(isInsideSlots(at('2026-11-30T12:30:00Z'), 'Asia/Kolkata', [weekdays]), false);
    assert.deepEqual(wallClock(at('2026-11-30T04:00:00Z'), 'Asia/Kolkata').weekday, 'mon');
  });

  test('over a weekend the next opening is Monday morning', () => {
    const saturdayNoon = at('2026-11-28T06:30:00Z');
    assert.equal(isInsideSlots(saturdayNoon, 'Asia/Kolkata', [weekdays]), false);
    assert.equal(nextOpening(saturdayNoon, 'Asia/Kolkata', [weekdays]), at('2026-11-30T04:00:00Z'));
    const open = at('2026-11-30T05:00:00Z');
    assert.equal(nextOpening(open, 'Asia/Kolkata', [weekdays]), open, 'open now: now');
  });

  test('a slot that crosses midnight runs into the next day, which need not be listed', () => {
    const zone = 'Asia/Kolkata';
    assert.equal(isInsideSlots(at('2026-11-27T16:29:00Z'), zone, [lateNight]), false); // Fri 21:59
    assert.equal(isInsideSlots(at('2026-11-27T16:30:00Z'), zone, [lateNight]), true); // Fri 22:00
    assert.equal(isInsideSlots(at('2026-11-27T20:29:00Z'), zone, [lateNight]), true); // Sat 01:59
    assert.equal(isInsideSlots(at('2026-11-27T20:30:00Z'), zone, [lateNight]), false); // Sat 02:00
    // Thursday 23:00 is not inside: the slot starts on Fridays only.
    assert.equal(isInsideSlots(at('2026-11-26T17:30:00Z'), zone, [lateNight]), false);
    assert.equal(nextOpening(at('2026-11-27T20:30:00Z'), zone, [lateNight]), at('2026-12-04T16:30:00Z'));
  });

  test('daylight saving: the same local hours move in UTC, and a start inside the gap opens after it', () => {
    const zone = 'America/New_York';
    const nine: Slot = { days: ['sun', 'mon'], start: '09:00', end: '17:00' };
    // 2026-03-08 is the spring change (02:00 -> 03:00); Saturday night to Sunday 09:00 EDT = 13:00 UTC.
    assert.equal(nextOpening(at('2026-03-07T23:00:00Z'), zone, [nine]), at('2026-03-08T13:00:00Z'));
    // The week before, 09:00 EST = 14:00 UTC.
    assert.equal(nextOpening(at('2026-02-28T23:00:00Z'), zone, [nine]), at('2026-03-01T14:00:00Z'));
    const inGap: Slot = { days: ['sun'], start: '02:30', end: '04:00' };
    const opening = nextOpening(at('2026-03-08T05:00:00Z'), zone, [inGap]) as number;
    assert.ok(
      opening >= at('2026-03-08T07:00:00Z') && opening <= at('2026-03-08T07:30:00Z'),
      new Date(opening).toISOString(),
    );
    assert.equal(isInsideSlots(at('2026-03-08T07:45:00Z'), zone, [inGap]), true); // 03:45 EDT
  });

  test('"24:00" closes at midnight; no slot on any day never opens', () => {
    const evening: Slot = { days: ['sun'], start: '20:00', end: '24:00' };
    assert.equal(isInsideSlots(at('2026-11-29T18:29:00Z'), 'Asia/Kolkata', [evening]), true); // Sun 23:59
    assert.equal(isInsideSlots(at('2026-11-29T18:30:00Z'), 'Asia/Kolkata', [evening]), false); // Mon 00:00
    assert.equal(nextOpening(0, 'Asia/Kolkata', []), null);
  });
});
