import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { addDecimals, formatAmount, parseDecimal } from './decimal.ts';
import { bankDays, summaryRecord } from './summary.ts';

describe('exact amounts', () => {
  it.each([
    [['0.10', '0.20'], '0.30'],
    [['7', '15000.5'], '15007.50'],
    [['1500.000'], '1500.00'],
    [['0.125', '0.125'], '0.25'],
    [['0.125'], '0.125'],
    [['0000012.30'], '12.30'],
    [['99999999999999.99', '0.01'], '100000000000000.00'],
    [['123456789012345678901234567890.5', '0.5'], '123456789012345678901234567891.00'],
  ])('adds %j to %s, written with kobo or more where the value needs it', (amounts, sum) => {
    expect(formatAmount(amounts.map(parseDecimal).reduce(addDecimals))).toBe(sum);
  });

  it('refuses text that is not a plain decimal rather than guess', () => {
    for (const text of ['', '1e3', '-1', '1,000.00', ' 1.00', '1.']) expect(() => parseDecimal(text)).toThrow(RangeError);
  });
});

describe('bankDays', () => {
  it('cuts at midnight in the zone, clipping the first and last day to the range', () => {
    expect(bankDays(new Date('2024-04-30T23:30:00Z'), new Date('2024-05-02T12:00:00+01:00'), 'Africa/Lagos')).toEqual([
      {
        date: '2024-05-01',
        from: Date.parse('2024-04-30T23:30:00Z'),
        to: Date.parse('2024-05-02T00:00:00+01:00'),
        fromOffset: 60,
        toOffset: 60,
      },
      {
        date: '2024-05-02',
        from: Date.parse('2024-05-02T00:00:00+01:00'),
        to: Date.parse('2024-05-02T12:00:00+01:00'),
        fromOffset: 60,
        toOffset: 60,
      },
    ]);
  });

  it('gives a zone with daylight saving its 23-hour day', () => {
    const days = bankDays(new Date('2024-03-30T00:00:00Z'), new Date('2024-04-01T00:00:00+01:00'), 'Europe/London');
    expect(days.map((day) => [day.date, (day.to - day.from) / 3_600_000])).toEqual([
      ['2024-03-30', 24],
      ['2024-03-31', 23],
    ]);
  });
});

describe('bankDays and summaryRecord against luxon, day by day', () => {
  // The reference: luxon's own calendar arithmetic and ISO writing, for every day of the range.
  function luxonDays(from: Date, to: Date, zone: string) {
    const days: { date: string; from: string; to: string }[] = [];
    let day = DateTime.fromMillis(from.getTime(), { zone }).startOf('day');
    while (day.toMillis() < to.getTime()) {
      const next = day.plus({ days: 1 }).startOf('day');
      const iso = (ms: number) => DateTime.fromMillis(ms, { zone }).toISO()!;
      days.push({
        date: day.toISODate()!,
        from: iso(Math.max(day.toMillis(), from.getTime())),
        to: iso(Math.min(next.toMillis(), to.getTime())),
      });
      day = next;
    }
    return days;
  }

  it.each([
    'Africa/Lagos',
    'UTC',
    'Etc/UTC',
    'Europe/London',
    'America/New_York',
    'America/Santiago',
    'Asia/Kolkata',
    'Australia/Lord_Howe',
    'Pacific/Chatham',
  ])('cuts and writes every day of two years in %s as luxon does', (zone) => {
    const [from, to] = [new Date('2023-01-01T07:13:00Z'), new Date('2025-01-03T19:00:00Z')];
    const days = bankDays(from, to, zone);
    const written = summaryRecord(days, [], zone).days.map(({ date, from: start, to: end }) => ({ date, from: start, to: end }));
    expect(written).toEqual(luxonDays(from, to, zone));
  });
});
