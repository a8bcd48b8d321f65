import { type Slot, WEEKDAYS, type Weekday } from './settings.ts';

/**
 * Calling hours: whether an instant falls inside a campaign's slots, read on the wall clock of its time zone
 * (daylight saving included), and when they open next. A slot whose end is before its start runs past
 * midnight into the next day; "24:00" is the end of the day.
 */

const MINUTE_MS = 60_000;
const DAY_MINUTES = 24 * 60;

interface WallClock {
  year: number;
  month: number;
  day: number;
  weekday: Weekday;
  minutes: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** The date, weekday and minute of the day that a clock in `zone` shows at `instant`. */
export function wallClock(instant: number, zone: string): WallClock {
  const parts: Record<string, string> = {};
  for (const part of formatterFor(zone).formatToParts(instant)) parts[part.type] = part.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    weekday: (parts.weekday ?? 'Mon').toLowerCase().slice(0, 3) as Weekday,
    minutes: Number(parts.hour) * 60 + Number(parts.minute),
  };
}

const minutesOf = (time: string): number => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

const dayBefore = (day: Weekday): Weekday => WEEKDAYS[(WEEKDAYS.indexOf(day) + 6) % 7] as Weekday;

/** Whether the clock of `zone` at `instant` is inside one of `slots`. */
export function isInsideSlots(instant: number, zone: string, slots: readonly Slot[]): boolean {
  const now = wallClock(instant, zone);
  return slots.some((slot) => {
    const start = minutesOf(slot.start);
    const end = minutesOf(slot.end);
    if (start < end) return slot.days.includes(now.weekday) && now.minutes >= start && now.minutes < end;
    return (
      (slot.days.includes(now.weekday) && now.minutes >= start) ||
      (slot.days.includes(dayBefore(now.weekday)) && now.minutes < end)
    );
  });
}

/** The instant the clock of `zone` shows this local date and minute (the first such, or just after a gap). */
function instantOf(year: number, month: number, day: number, minutes: number, zone: string): number {
  const asUtc = Date.UTC(year, month - 1, day, 0, minutes);
  const first = asUtc - offsetAt(asUtc, zone);
  const second = asUtc - offsetAt(first, zone);
  const shows = (instant: number) => wallClock(instant, zone).minutes === minutes;
  if (shows(first)) return first;
  if (shows(second)) return second;
  // The clock skips this minute (the spring change): the guess past the gap opens as late as the gap is long.
  return Math.max(first, second);
}

/** How far the clock of `zone` is ahead of UTC at `instant`, in milliseconds (whole minutes). */
function offsetAt(instant: number, zone: string): number {
  const clock = wallClock(instant, zone);
  const shown = Date.UTC(clock.year, clock.month - 1, clock.day, 0, clock.minutes);
  return shown - Math.floor(instant / MINUTE_MS) * MINUTE_MS;
}

/**
 * When the calling hours are next open, from `instant`: `instant` itself when they are open now, else the start
 * of the soonest slot; null when `slots` open on no day.
 */
export function nextOpening(instant: number, zone: string, slots: readonly Slot[]): number | null {
  if (isInsideSlots(instant, zone, slots)) return instant;
  const today = wallClock(instant, zone);
  let soonest: number | null = null;
  for (let offset = 0; offset <= 7; offset++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + offset));
    const weekday = WEEKDAYS[(date.getUTCDay() + 6) % 7] as Weekday;
    for (const slot of slots) {
      if (!slot.days.includes(weekday)) continue;
      const start = minutesOf(slot.start);
      if (start >= DAY_MINUTES) continue;
      const at = instantOf(date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), start, zone);
      if (at > instant && (soonest === null || at < soonest)) soonest = at;
    }
    if (soonest !== null && offset >= 1) break;
  }
  return soonest;
}
