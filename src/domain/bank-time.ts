// The bank's local wall-clock times without a zone (the webhook's tranDateTime, the collection
// service's settlementDateTime), read as ISO 8601 with the offset of BANK_TIMEZONE at that instant. Parsed by luxon; the answers are kept, since parsing and asking the
// zone for its offset showed in the webhook's profile.
import { DateTime, FixedOffsetZone } from 'luxon';

// en-US: the meridiem is AM/PM whatever the host's locale.
const LOCALE = 'en-US';
/**
 * The bank's forms of `tranDateTime` (luxon tokens; `a` matches AM/PM in any case), each parser
 * built once: building one per call showed in the webhook's profile.
 */
const BANK_TIME_FORMATS = [
  { tokens: 'yyyy-MM-dd HH:mm:ss', milliseconds: false, twelveHour: false },
  { tokens: 'yyyy-MM-dd HH:mm:ss.SSS', milliseconds: true, twelveHour: false },
  { tokens: 'M/d/yyyy h:mm:ss a', milliseconds: false, twelveHour: true },
].map((format) => ({ ...format, parser: DateTime.buildFormatParser(format.tokens, { locale: LOCALE }) }));
// luxon's `h` takes any one or two digits; on a 12-hour clock only 1 to 12 are hours, written
// with a leading zero or without, as the day and the month may be.
const TWELVE_HOUR_CLOCK = / (?:0?[1-9]|1[0-2]):\d\d:\d\d [ap]m$/i;
/**
 * The years a bank time may fall in. Outside them no bank meant the time, and the stores disagree on
 * it (PostgreSQL refuses year 0, which SQLite keeps with the zone's local mean time), so it is null
 * on both, as an unreadable time is.
 */
const BANK_YEARS = { first: 1900, last: 9999 } as const;

/**
 * The bank's local `tranDateTime` as ISO 8601 with the zone's offset at that instant, or null when
 * unreadable or outside the years 1900 to 9999. Forms: `YYYY-MM-DD HH:MM:SS[.fff]` and
 * `M/D/YYYY h:mm:ss AM|PM`. Milliseconds are written only when given.
 */
export function readBankTime(text: string | null, timezone: string): string | null {
  if (text === null) return null;
  const key = `${timezone} ${text}`;
  const known = timesByText.get(key);
  if (known !== undefined) return known;
  const time = parseBankTime(text, timezone);
  if (timesByText.size >= TEXT_CACHE_LIMIT) timesByText.clear();
  timesByText.set(key, time);
  return time;
}

/**
 * Deliveries that arrive together mostly carry the same second, so each text's answer is kept:
 * parsing showed in the webhook's profile (docs/benchmarks.md, "What shapes the code").
 */
const timesByText = new Map<string, string | null>();
const TEXT_CACHE_LIMIT = 1_024;

function parseBankTime(text: string, timezone: string): string | null {
  for (const format of BANK_TIME_FORMATS) {
    // The fields as written, read in UTC (where no time is skipped), then given the zone's offset.
    const wallClock = DateTime.fromFormatParser(text, format.parser, { zone: 'utc', locale: LOCALE });
    if (!wallClock.isValid) continue;
    if (format.twelveHour && !TWELVE_HOUR_CLOCK.test(text)) return null;
    if (wallClock.year < BANK_YEARS.first || wallClock.year > BANK_YEARS.last) return null;
    const offset = zoneOffsetAt(wallClock, timezone);
    if (offset === null) return null;
    return wallClock
      .setZone(FixedOffsetZone.instance(offset), { keepLocalTime: true })
      .toISO({ suppressMilliseconds: !format.milliseconds });
  }
  return null;
}

/** Offsets already worked out, by zone and wall-clock minute; null for a minute a DST change skips. */
const offsetsByMinute = new Map<string, number | null>();
/** Bank times cluster around now, so a few thousand minutes cover any real stream of deliveries. */
const OFFSET_CACHE_LIMIT = 4_096;

/**
 * The zone's UTC offset in minutes at the wall-clock time `wallClock` (its fields read as local to
 * `timezone`), or null when that time does not exist there. Asking the zone (Intl) is slow, and
 * zones change offset only on a whole minute, so the answer is kept per wall-clock minute.
 */
function zoneOffsetAt(wallClock: DateTime<true>, timezone: string): number | null {
  const key = `${timezone} ${Math.floor(wallClock.toMillis() / 60_000)}`;
  const known = offsetsByMinute.get(key);
  if (known !== undefined) return known;
  const time = DateTime.fromObject(wallClock.toObject(), { zone: timezone });
  // A wall-clock time skipped by a DST change does not exist; luxon would move it silently.
  const offset = time.isValid && time.hour === wallClock.hour && time.minute === wallClock.minute ? time.offset : null;
  if (offsetsByMinute.size >= OFFSET_CACHE_LIMIT) offsetsByMinute.clear();
  offsetsByMinute.set(key, offset);
  return offset;
}
