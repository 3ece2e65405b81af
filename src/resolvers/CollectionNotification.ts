import type {
  CollectionNotificationConnectionResolvers,
  CollectionNotificationEdgeResolvers,
  CollectionNotificationResolvers,
} from '../__generated__/resolvers-types.ts';
import { encodeCursor } from '../collection/cursor.ts';
import type { ConfirmedNotificationRecord } from '../domain/index.ts';
import * as valid from '../validation.ts';
import { pageInfoOf } from './page-info.ts';

export const CollectionNotification: CollectionNotificationResolvers = {
  __resolveReference: ({ settlementId }, { loaders }) => loaders.notificationLoader.load(valid.settlementId(settlementId)),
  // An event of the confirmed stream is positioned in the log of confirmations, and resumes there.
  cursor: (notification) =>
    'confirmedAt' in notification
      ? encodeCursor((notification as ConfirmedNotificationRecord).confirmedAt, 'confirmations')
      : encodeCursor(notification.position),
  // The bytes are stored only where the text cannot give them back (not UTF-8); else they are its UTF-8.
  rawBodyBase64: ({ rawBody, rawBodyBytes }) =>
    (rawBodyBytes
      ? Buffer.from(rawBodyBytes.buffer, rawBodyBytes.byteOffset, rawBodyBytes.byteLength)
      : Buffer.from(rawBody, 'utf8')
    ).toString('base64'),
};

export const CollectionNotificationConnection: CollectionNotificationConnectionResolvers = {
  edges: (page) => page.notifications,
  nodes: (page) => page.notifications,
  pageInfo: ({ notifications, hasNextPage }) =>
    pageInfoOf(notifications, hasNextPage, (notification) => encodeCursor(notification.position)),
};

export const CollectionNotificationEdge: CollectionNotificationEdgeResolvers = {
  cursor: (notification) => encodeCursor(notification.position),
  node: (notification) => notification,
};
