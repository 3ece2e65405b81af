import { describe, expect, it } from 'vitest';
import { storedNotification } from '../../test/helpers/notifications.ts';
import { NOTHING_ASKED, PENDING, type BankTransactionRecord, type Confirmation } from '../domain/index.ts';
import { askBy, failedAsk, verdictOf } from './confirmation-verdict.ts';

const NOW = Date.parse('2026-11-22T13:00:00.000Z');
const pending = (confirmation: Partial<Confirmation> = {}) =>
  storedNotification({ confirmation: { ...PENDING, ...NOTHING_ASKED, ...confirmation } });

/** The bank's record of `record`'s transfer, with the same values unless told. */
const atBank = (record: ReturnType<typeof pending>, overrides: Partial<BankTransactionRecord> = {}) =>
  ({ ...record, acknowledged: true, raw: {}, rawBody: '{}', sourceBankCode: null, settledAt: null, ...overrides }) as BankTransactionRecord;

describe('verdictOf', () => {
  it("decides CONFIRMED or MISMATCHED from the bank's record of the transfer", () => {
    const record = pending();
    expect(verdictOf(record, atBank(record), { now: NOW, recheckMs: 30_000 })).toMatchObject({
      kind: 'outcome',
      outcome: { status: 'CONFIRMED', differences: [], acknowledgedByBank: true, checkedAt: '2026-11-22T13:00:00.000Z' },
    });
    expect(verdictOf(record, atBank(record, { vatAmount: '7.50' }), { now: NOW, recheckMs: 30_000 })).toMatchObject({
      kind: 'outcome',
      outcome: { status: 'MISMATCHED', differences: ['vatAmount'] },
    });
  });

  it('takes a first not-found answer for a retry after CONFIRMATION_NOT_FOUND_RECHECK_S, and the second, that long later, for NOT_AT_BANK', () => {
    expect(verdictOf(pending(), null, { now: NOW, recheckMs: 30_000 })).toMatchObject({
      kind: 'retry',
      retry: { kind: 'not-found', delayMs: 30_000, at: '2026-11-22T13:00:00.000Z' },
    });
    const seenTenSecondsAgo = pending({ notFoundAt: '2026-11-22T12:59:50.000Z' });
    expect(verdictOf(seenTenSecondsAgo, null, { now: NOW, recheckMs: 30_000 })).toMatchObject({
      kind: 'retry',
      retry: { delayMs: 20_000 },
    });
    const seenLongAgo = pending({ notFoundAt: '2026-11-22T12:59:30.000Z' });
    expect(verdictOf(seenLongAgo, null, { now: NOW, recheckMs: 30_000 })).toMatchObject({
      kind: 'outcome',
      outcome: { status: 'NOT_AT_BANK', acknowledgedByBank: null },
    });
  });
});

describe('a failed ask', () => {
  it('backs off 30 s, doubling with each failure in a row, at most 15 minutes', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 40].map((failedAsks) => failedAsk(pending({ failedAsks }), NOW).delayMs)).toEqual([
      30_000, 60_000, 120_000, 240_000, 480_000, 900_000, 900_000, 900_000,
    ]);
  });

  it('asks by sessionId after three failed asks by settlementId, where there is one', () => {
    expect(askBy(pending({ failedAsks: 2 }))).toBe('settlementId');
    expect(askBy(pending({ failedAsks: 3 }))).toBe('sessionId');
    expect(askBy(storedNotification({ sessionId: ' ', confirmation: { ...PENDING, ...NOTHING_ASKED, failedAsks: 3 } }))).toBe(
      'settlementId',
    );
  });
});
