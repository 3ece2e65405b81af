import type {
  CollectionNotificationConnectionResolvers,
  CollectionNotificationEdgeResolvers,
  CollectionNotificationResolvers,
} from '../__generated__/resolvers-types.ts';
import { encodeCursor } from '../collection/cursor.ts';
import * as valid from '../validation.ts';

export const CollectionNotification: CollectionNotificationResolvers = {
  __resolveReference: ({ settlementId }, { loaders }) => loaders.notificationLoader.load(valid.settlementId(settlementId)),
  cursor: (notification) => encodeCursor(notification.position),
};

export const CollectionNotificationConnection: CollectionNotificationConnectionResolvers = {
  edges: (page) => page.notifications,
  nodes: (page) => page.notifications,
  pageInfo: ({ notifications, hasNextPage }) => ({
    hasNextPage,
    hasPreviousPage: false,
    startCursor: notifications[0] ? encodeCursor(notifications[0].position) : null,
    endCursor: notifications.at(-1) ? encodeCursor(notifications.at(-1)!.position) : null,
  }),
};

export const CollectionNotificationEdge: CollectionNotificationEdgeResolvers = {
  cursor: (notification) => encodeCursor(notification.position),
  node: (notification) => notification,
};
