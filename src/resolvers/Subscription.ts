import type { SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import { cursorPosition } from '../collection/cursor.ts';
import type { CollectionNotificationRecord } from '../domain/index.ts';
import * as valid from '../validation.ts';

export const Subscription: SubscriptionResolvers = {
  incomingTransfer: {
    subscribe: async (_, args, { incomingTransfers, store }) => {
      const accountNumber = args.accountNumber == null ? undefined : valid.accountNumber(args.accountNumber);
      const after = args.after == null ? undefined : await cursorPosition(args.after, store);
      return incomingTransfers({ accountNumber, after });
    },
    // The stream yields the stored notification itself, not a `{ incomingTransfer }` wrapper.
    resolve: (notification: CollectionNotificationRecord) => notification,
  },
};
