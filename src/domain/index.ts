/**
 * The records every layer shares: the store, pub/sub, the bank clients, the loaders and the resolvers
 * (through codegen's mappers) all speak these, and the log position's order. This floor imports
 * nothing of ours.
 */
export * from './amount.ts';
export type * from './bank.ts';
export * from './bank-time.ts';
export type * from './bank-transaction.ts';
export * from './collection-signature.ts';
export * from './confirmation.ts';
export type * from './merchant.ts';
export * from './notification.ts';
export type * from './transaction.ts';
export type * from './quarantine.ts';
export * from './reconciliation.ts';
export * from './money-fields.ts';
