import type { BankTransactionResolvers } from '../__generated__/resolvers-types.ts';
import { moneyText } from '../domain/index.ts';

const money = (amount: string | null) => (amount === null ? null : moneyText(amount));

/**
 * The bank writes `1500.0` where we store `1500.00`: its amounts are written as ours, so a client
 * comparing the two sides of a check sees no false difference; `raw` keeps the bank's own text.
 */
export const BankTransaction: BankTransactionResolvers = {
  transactionAmount: ({ transactionAmount }) => moneyText(transactionAmount),
  settledAmount: ({ settledAmount }) => money(settledAmount),
  feeAmount: ({ feeAmount }) => money(feeAmount),
  vatAmount: ({ vatAmount }) => money(vatAmount),
};
