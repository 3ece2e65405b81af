import { describe, expect, it } from 'vitest';
import { bankDifferences, type ComparedFields } from './confirmation.ts';

const ours: ComparedFields = {
  settlementId: '202611221405090001',
  sessionId: '000013261122140509000001',
  accountNumber: '0123456789',
  currency: 'NGN',
  transactionAmount: '1000.00',
  settledAmount: '990.00',
  feeAmount: '10.00',
  vatAmount: '0.75',
};

describe('bankDifferences', () => {
  it('finds none where the bank writes the same amounts another way and the currency in another case', () => {
    expect(
      bankDifferences(ours, {
        ...ours,
        transactionAmount: '1000.0',
        settledAmount: '990',
        feeAmount: '010.000',
        vatAmount: '0.750',
        currency: 'ngn',
      }),
    ).toEqual([]);
  });

  it('tells amounts apart to the last digit, past what a float holds', () => {
    const big = { ...ours, transactionAmount: '99999999999999.99' };
    expect(bankDifferences(big, { ...big, transactionAmount: '99999999999999.99' })).toEqual([]);
    // As floats the two are one number.
    expect(Number('99999999999999.99')).toBe(Number('99999999999999.98'));
    expect(bankDifferences(big, { ...big, transactionAmount: '99999999999999.98' })).toEqual(['transactionAmount']);
  });

  it("names every compared field that differs, by the contract's names, in one order", () => {
    const atBank = { ...ours, vatAmount: null, accountNumber: '0123456780', sessionId: '', transactionAmount: '1500.00', currency: 'USD' };
    expect(bankDifferences(ours, atBank)).toEqual(['sessionId', 'accountNumber', 'currency', 'transactionAmount', 'vatAmount']);
  });

  it('compares sessionIds trimmed, and not at all where ours was stored without one', () => {
    expect(bankDifferences({ ...ours, sessionId: ` ${ours.sessionId} ` }, { ...ours })).toEqual([]);
    expect(bankDifferences({ ...ours, sessionId: '' }, { ...ours })).toEqual([]);
    expect(bankDifferences(ours, { ...ours, sessionId: '000013261122140509000002' })).toEqual(['sessionId']);
  });
});
