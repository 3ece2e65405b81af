import type { Resolvers } from '../__generated__/resolvers-types.ts';
import { DateTimeScalar, DecimalScalar, JSONScalar } from '../scalars.ts';
import { Account } from './Account.ts';
import { Bank } from './Bank.ts';
import { BankTransaction } from './BankTransaction.ts';
import { BillCategory } from './BillCategory.ts';
import { CollectionNotification, CollectionNotificationConnection, CollectionNotificationEdge } from './CollectionNotification.ts';
import { Mutation } from './Mutation.ts';
import { QuarantinedDelivery, QuarantinedDeliveryConnection, QuarantinedDeliveryEdge } from './QuarantinedDelivery.ts';
import { Query } from './Query.ts';
import { Subscription } from './Subscription.ts';

/** Every resolver, keyed by GraphQL type; typed against the generated schema types. */
export const resolvers: Resolvers = {
  Query,
  Mutation,
  Subscription,
  Account,
  Bank,
  BankTransaction,
  BillCategory,
  CollectionNotification,
  CollectionNotificationConnection,
  CollectionNotificationEdge,
  QuarantinedDelivery,
  QuarantinedDeliveryConnection,
  QuarantinedDeliveryEdge,
  Decimal: DecimalScalar,
  DateTime: DateTimeScalar,
  JSON: JSONScalar,
};
