import { describe, expect, it } from 'vitest';
import { moneyDifferences, moneyFieldsOf, moneyKey, type MoneyFields } from './money-fields.ts';

const stored: MoneyFields = {
  accountNumber: '0123456789',
  transactionAmount: '1500.00',
  settledAmount: '1489.25',
  feeAmount: '10.00',
  vatAmount: null,
  currency: 'NGN',
  sourceAccountNumber: '0987654321',
};

describe('money fields', () => {
  it('finds none different in an honest retry, however its amounts and currency are written', () => {
    expect(moneyDifferences(stored, { ...stored })).toEqual([]);
    expect(
      moneyDifferences(stored, { ...stored, transactionAmount: '1500.0', settledAmount: '01489.250', feeAmount: '10', currency: 'ngn' }),
    ).toEqual([]);
    expect(moneyDifferences({ ...stored, transactionAmount: '0.50' }, { ...stored, transactionAmount: '000.5' })).toEqual([]);
  });

  it('names every field whose money differs: another amount, account or currency, or one present on one side only', () => {
    expect(moneyDifferences(stored, { ...stored, transactionAmount: '950000.00' })).toEqual(['transactionAmount']);
    expect(moneyDifferences(stored, { ...stored, accountNumber: '1234567890', currency: 'USD' })).toEqual(['accountNumber', 'currency']);
    expect(moneyDifferences(stored, { ...stored, vatAmount: '0.75', feeAmount: null })).toEqual(['feeAmount', 'vatAmount']);
    expect(moneyDifferences(stored, { ...stored, transactionAmount: '1500.01' })).toEqual(['transactionAmount']);
    expect(moneyDifferences(stored, { ...stored, transactionAmount: '15000' })).toEqual(['transactionAmount']);
    // Another payer is another transfer, whatever the amounts.
    expect(moneyDifferences(stored, { ...stored, sourceAccountNumber: '1122334455' })).toEqual(['sourceAccountNumber']);
    expect(moneyDifferences(stored, { ...stored, sourceAccountNumber: null })).toEqual(['sourceAccountNumber']);
  });

  it('reads back the fields it remembered as one string', () => {
    expect(moneyFieldsOf(moneyKey(stored))).toEqual(stored);
    const sparse = { ...stored, settledAmount: null, feeAmount: null, currency: null, sourceAccountNumber: null };
    expect(moneyFieldsOf(moneyKey(sparse))).toEqual(sparse);
  });
});
