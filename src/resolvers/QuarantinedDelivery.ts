import type {
  QuarantinedDeliveryConnectionResolvers,
  QuarantinedDeliveryEdgeResolvers,
  QuarantinedDeliveryResolvers,
} from '../__generated__/resolvers-types.ts';
import { encodeQuarantineCursor } from '../collection/cursor.ts';
import { pageInfoOf } from './page-info.ts';

const bytes = (body: Uint8Array) => Buffer.from(body.buffer, body.byteOffset, body.byteLength);

export const QuarantinedDelivery: QuarantinedDeliveryResolvers = {
  // Buffer, not TextDecoder: a leading byte-order mark stays in the text, as it was sent.
  rawBody: (delivery) => bytes(delivery.rawBody).toString('utf8'),
  rawBodyBase64: (delivery) => bytes(delivery.rawBody).toString('base64'),
};

export const QuarantinedDeliveryConnection: QuarantinedDeliveryConnectionResolvers = {
  edges: (page) => page.deliveries,
  nodes: (page) => page.deliveries,
  pageInfo: ({ deliveries, hasNextPage }) => pageInfoOf(deliveries, hasNextPage, (delivery) => encodeQuarantineCursor(delivery.id)),
};

export const QuarantinedDeliveryEdge: QuarantinedDeliveryEdgeResolvers = {
  cursor: (delivery) => encodeQuarantineCursor(delivery.id),
  node: (delivery) => delivery,
};
