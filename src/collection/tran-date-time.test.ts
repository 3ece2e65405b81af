import { describe, expect, it } from 'vitest';
import { parseNotification } from './notification.ts';

// The bank's tranDateTime is a wall-clock time without a zone: read in BANK_TIMEZONE, never a refusal.
const LAGOS = 'Africa/Lagos';
const receivedAt = new Date('2026-11-22T13:05:10.250Z');
const REQUIRED = { sessionId: 'SES-0001', accountNumber: '0123456789', settlementId: 'STL-2026-0001', transactionAmount: '1500.00' };

/** The transactionTime stored for a body whose tranDateTime is `tranDateTime`, read in `timezone`. */
function timeOf(tranDateTime: unknown, timezone = LAGOS) {
  const result = parseNotification(JSON.stringify({ ...REQUIRED, tranDateTime }), { timezone, receivedAt });
  if (!result.ok) throw new Error(`expected acceptance, got ${result.reason}`);
  return result.notification.transactionTime;
}

describe('parseNotification: tranDateTime', () => {
  it.each([
    ['2026-11-22 14:05:09', '2026-11-22T14:05:09+01:00'],
    ['2026-11-22 14:05:09.123', '2026-11-22T14:05:09.123+01:00'], // milliseconds kept when given
    ['2026-11-22 14:05:09.000', '2026-11-22T14:05:09.000+01:00'],
    ['11/22/2026 2:05:09 PM', '2026-11-22T14:05:09+01:00'],
    ['11/22/2026 2:05:09 pm', '2026-11-22T14:05:09+01:00'],
    ['1/5/2026 12:00:01 AM', '2026-01-05T00:00:01+01:00'], // 12 AM is just after midnight
    ['1/5/2026 12:30:00 PM', '2026-01-05T12:30:00+01:00'], // 12 PM is just after noon
    ['01/05/2026 09:00:00 AM', '2026-01-05T09:00:00+01:00'], // day, month and hour zero-padded
    ['  2026-11-22 14:05:09 ', '2026-11-22T14:05:09+01:00'],
  ])('reads %j in Africa/Lagos as %s', (sent, expected) => {
    expect(timeOf(sent)).toBe(expected);
  });

  it('uses the offset of the zone at that date: America/New_York in summer and in winter', () => {
    const newYork = 'America/New_York';
    expect(timeOf('2026-07-04 09:00:00', newYork)).toBe('2026-07-04T09:00:00-04:00');
    expect(timeOf('2026-01-15 09:00:00', newYork)).toBe('2026-01-15T09:00:00-05:00');
    expect(timeOf('7/4/2026 9:00:00 AM', newYork)).toBe('2026-07-04T09:00:00-04:00');
  });

  it('keeps the offsets it has worked out apart by zone and by minute', () => {
    // The offset is remembered per zone and wall-clock minute: the same minute in another zone, or
    // the next seconds of a minute just read, must not borrow a wrong one.
    expect(timeOf('2026-07-04 09:00:00', LAGOS)).toBe('2026-07-04T09:00:00+01:00');
    expect(timeOf('2026-07-04 09:00:30', 'America/New_York')).toBe('2026-07-04T09:00:30-04:00');
    expect(timeOf('2026-07-04 09:00:59.500', LAGOS)).toBe('2026-07-04T09:00:59.500+01:00');
    expect(timeOf('2026-03-08 01:59:59', 'America/New_York')).toBe('2026-03-08T01:59:59-05:00');
    expect(timeOf('2026-03-08 03:00:00', 'America/New_York')).toBe('2026-03-08T03:00:00-04:00');
    expect(timeOf('2026-03-08 02:00:00', 'America/New_York')).toBeNull();
    expect(timeOf('2026-03-08 02:00:00', LAGOS)).toBe('2026-03-08T02:00:00+01:00');
  });

  it('gives null for a wall-clock time skipped by the DST change', () => {
    expect(timeOf('2026-03-08 02:30:00', 'America/New_York')).toBeNull();
  });

  it.each([
    ['a 13th month', '2026-13-22 14:05:09'],
    ['February 30', '2026-02-30 10:00:00'],
    ['hour 25', '2026-11-22 25:05:09'],
    ['13 PM', '11/22/2026 13:05:09 PM'],
    ['0 AM', '11/22/2026 0:05:09 AM'],
    ['a 13th month in M/D/YYYY', '13/22/2026 2:05:09 PM'],
    ['no seconds', '2026-11-22 14:05'],
    ['words', 'yesterday afternoon'],
    ['blank', '  '],
    ['the text null', 'null'],
    ['a JSON number', 1795871109000],
    // Years no bank meant, which one store or the other cannot hold.
    ['year 0', '0000-01-01 00:00:00'],
    ['year 1899', '1899-12-31 23:59:59'],
    ['year 10000', '10000-01-01 00:00:00'],
    ['year 0 in M/D/YYYY', '1/1/0000 12:00:00 AM'],
  ])('gives null, not a refusal, for %s', (_name, value) => {
    expect(timeOf(value)).toBeNull();
  });

  it('reads the first and the last years a bank time may fall in', () => {
    expect(timeOf('1900-01-01 00:00:00', 'UTC')).toBe('1900-01-01T00:00:00Z');
    expect(timeOf('9999-12-31 23:59:59')).toBe('9999-12-31T23:59:59+01:00');
  });

  it('gives null when tranDateTime is absent', () => {
    expect(timeOf(undefined)).toBeNull();
  });
});
