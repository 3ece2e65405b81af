import type {
  CollectionNotificationConnectionResolvers,
  CollectionNotificationEdgeResolvers,
  CollectionNotificationResolvers,
} from '../__generated__/resolvers-types.ts';
import { encodeCursor } from '../collection/cursor.ts';
import * as valid from '../validation.ts';
import { pageInfoOf } from './page-info.ts';

export const CollectionNotification: CollectionNotificationResolvers = {
  __resolveReference: ({ settlementId }, { loaders }) => loaders.notificationLoader.load(valid.settlementId(settlementId)),
  cursor: (notification) => encodeCursor(notification.position),
};

export const CollectionNotificationConnection: CollectionNotificationConnectionResolvers = {
  edges: (page) => page.notifications,
  nodes: (page) => page.notifications,
  pageInfo: ({ notifications, hasNextPage }) => pageInfoOf(notifications, hasNextPage, (notification) => encodeCursor(notification.position)),
};

export const CollectionNotificationEdge: CollectionNotificationEdgeResolvers = {
  cursor: (notification) => encodeCursor(notification.position),
  node: (notification) => notification,
};
