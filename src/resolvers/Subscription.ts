import type { SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import { decodeCursor } from '../collection/cursor.ts';
import type { CollectionNotificationRecord } from '../domain/index.ts';
import * as valid from '../validation.ts';

export const Subscription: SubscriptionResolvers = {
  incomingTransfer: {
    subscribe: (_, args, { incomingTransfers }) => {
      const accountNumber = args.accountNumber == null ? undefined : valid.accountNumber(args.accountNumber);
      const confirmed = args.confirmed === true;
      const after = args.after == null ? undefined : decodeCursor(args.after, 'after', confirmed ? 'confirmations' : 'notifications');
      return incomingTransfers({ accountNumber, after, confirmed });
    },
    // The stream yields the stored notification itself, not a `{ incomingTransfer }` wrapper.
    resolve: (notification: CollectionNotificationRecord) => notification,
  },
};
