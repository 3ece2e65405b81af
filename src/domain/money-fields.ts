import { decimalValue } from './amount.ts';
import type { NewCollectionNotification } from './notification.ts';

/**
 * The fields that make a notification's money: where it went, how much, in what, and from whom. Two
 * deliveries of one settlementId that differ in any of them are a conflict (a bank fault or a
 * forgery), not a retry.
 */
export const MONEY_FIELDS = [
  'accountNumber',
  'transactionAmount',
  'settledAmount',
  'feeAmount',
  'vatAmount',
  'currency',
  'sourceAccountNumber',
] as const;
export type MoneyField = (typeof MONEY_FIELDS)[number];
export type MoneyFields = Pick<NewCollectionNotification, MoneyField>;

const AMOUNTS = new Set<MoneyField>(['transactionAmount', 'settledAmount', 'feeAmount', 'vatAmount']);

/**
 * The money fields as one flat string, for remembering many cheaply. Unambiguous: no field holds a
 * NUL once normalised, and none is `''` (blank text is null).
 */
export function moneyKey(notification: MoneyFields): string {
  return MONEY_FIELDS.map((field) => notification[field] ?? '').join('\u0000');
}

/** The money fields `moneyKey` wrote. */
export function moneyFieldsOf(key: string): MoneyFields {
  const values = key.split('\u0000');
  const field = (index: number) => (values[index] === '' || values[index] === undefined ? null : values[index]);
  return {
    accountNumber: values[0] ?? '',
    transactionAmount: values[1] ?? '',
    settledAmount: field(2),
    feeAmount: field(3),
    vatAmount: field(4),
    currency: field(5),
    sourceAccountNumber: field(6),
  };
}

/**
 * The money fields in which `given` differs from `stored`: amounts by value (`1500.00` is `1500.0`
 * and `1500`), the currency in any case, the accounts exactly; none for an honest retry.
 */
export function moneyDifferences(stored: MoneyFields, given: MoneyFields): MoneyField[] {
  return MONEY_FIELDS.filter((field) => {
    const [a, b] = [stored[field], given[field]];
    if (a === b) return false;
    if (a === null || b === null) return true;
    if (AMOUNTS.has(field)) return decimalValue(a) !== decimalValue(b);
    return field === 'currency' ? a.toUpperCase() !== b.toUpperCase() : true;
  });
}
