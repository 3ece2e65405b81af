/**
 * What the store reads of an operation cost in its budget (`MAX_OPERATION_COST`), in the same units as
 * a bank call, so one document cannot run hundreds of year-long summaries: a page of notifications
 * costs one, a record read by its id costs one (a batch of entity references, one per page's worth),
 * and a range of days costs one for every SUMMARY_DAYS_PER_UNIT days it spans. Raw bodies are priced
 * by how many the response holds: one more unit for every RAW_BODIES_PER_UNIT of them, so no document
 * within the budget makes a response a replica cannot hold. The screens the README shows still fit
 * beside a few name enquiries, and a year's summary fits alone (docs/schema.md gives the prices of
 * each). These prices depend on arguments the schema's `@cost` cannot read, so they live here, beside it.
 */

import { MAX_QUARANTINED_LISTED } from '../collection/reconciliation.ts';
import { instant, pageSize } from '../validation.ts';

/** Days of a summary (or of a ranged page) one unit of the budget pays for. */
export const SUMMARY_DAYS_PER_UNIT = 16;

const DAY_MS = 86_400_000;

/** The most records one page reads, and so one unit of references read together by id. */
const PAGE_ROWS = 100;
/** A page's size when `first` is not given (resolvers/Query.ts). */
const DEFAULT_PAGE_ROWS = 20;

/** Raw bodies (rawBody, rawBodyBase64: each a whole delivery) one unit pays for, with bodies of up to PRICED_BODY_BYTES. */
export const RAW_BODIES_PER_UNIT = 10;
/** The body size RAW_BODIES_PER_UNIT is set for: WEBHOOK_MAX_BODY_BYTES' default. */
const PRICED_BODY_BYTES = 64 * 1024;

/** The fields that hold a delivery's whole body, by type. */
const RAW_BODY_FIELDS = new Set([
  'CollectionNotification.rawBody',
  'CollectionNotification.rawBodyBase64',
  'QuarantinedDelivery.rawBody',
  'QuarantinedDelivery.rawBodyBase64',
]);

/** Whether `Type.field` is a whole delivery's body: each one a response holds is priced. */
export function isRawBodyField(parentType: string, fieldName: string): boolean {
  return RAW_BODY_FIELDS.has(`${parentType}.${fieldName}`);
}

/**
 * Raw bodies one unit pays for when the webhook reads bodies of up to `maxBodyBytes`: ten at 64 KiB
 * or less, fewer as the bodies may be larger (one at 1 MiB), so the largest response the budget
 * allows stays the same size.
 */
export function rawBodiesPerUnit(maxBodyBytes: number): number {
  return Math.max(1, Math.min(RAW_BODIES_PER_UNIT, Math.floor((RAW_BODIES_PER_UNIT * PRICED_BODY_BYTES) / maxBodyBytes)));
}

/** The field whose value a selection reads: its parent type, its name and its arguments. */
export interface Owner {
  parentType: string;
  fieldName: string;
  args: Record<string, unknown>;
}

/**
 * How many items the list `Type.field` holds at most when the store fills it and `@listSize` cannot
 * say, read from the arguments of the field that owns it as its resolver reads them: a page's `nodes`
 * and `edges` (its `first`: 20 when not given, none when refused), the deliveries a check lists beside
 * a transfer, a reconciliation's items (one per id). Undefined for any other list.
 */
export function storeListSize(owner: Owner | undefined, parentType: string, fieldName: string): number | undefined {
  if (fieldName === 'quarantined' && (parentType === 'BankTransactionCheck' || parentType === 'ReconcileItem'))
    return MAX_QUARANTINED_LISTED;
  if (parentType === 'ReconcileReport' && fieldName === 'items' && owner?.fieldName === 'reconcileCollections') {
    return [owner.args.sessionIds, owner.args.settlementIds].find(Array.isArray)?.length ?? 0;
  }
  const page = owner?.fieldName === 'collectionNotifications' || owner?.fieldName === 'quarantinedDeliveries';
  if (!page || owner.parentType !== 'Query' || (fieldName !== 'nodes' && fieldName !== 'edges')) return undefined;
  const { first } = owner.args;
  try {
    return pageSize(typeof first === 'number' || first == null ? first : Number.NaN, DEFAULT_PAGE_ROWS, PAGE_ROWS);
  } catch {
    // Refused by its resolver: the page reads nothing.
    return 0;
  }
}

/** The store reads of `Type.field` with these arguments, in budget units; 0 for anything else. */
export function storeReadPrice(parentType: string, fieldName: string, args: Record<string, unknown>): number {
  if (parentType !== 'Query') return 0;
  if (fieldName === 'collectionSummary') return rangePrice(args.from, args.to);
  if (fieldName === 'collectionNotifications') return args.to == null ? 1 : rangePrice(args.from, args.to);
  if (fieldName === 'collectionNotification') return 1;
  if (fieldName === 'quarantinedDeliveries') return 1;
  return 0;
}

/** The store reads of `count` entity references of `typename` (`_entities`), read together by id. */
export function referenceReadPrice(typename: string, count: number): number {
  return typename === 'CollectionNotification' ? Math.ceil(count / PAGE_ROWS) : 0;
}

/**
 * The days [from, to) touches, priced; a range the resolver will refuse costs one (it reads nothing).
 * Each end is read as the resolver reads it (validation.ts `instant`), so no text can mean a short
 * range to the price and a long one to the resolver.
 */
function rangePrice(from: unknown, to: unknown): number {
  const [start, end] = [instantOrNaN(from, 'from'), instantOrNaN(to, 'to')];
  if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return 1;
  // Bank days are cut at the bank's midnight: a range touches at most one day more than it spans.
  const days = Math.ceil((end - start) / DAY_MS) + 1;
  return Math.max(1, Math.ceil(days / SUMMARY_DAYS_PER_UNIT));
}

/** The instant the resolver reads in `value`, in ms; NaN where it would refuse it. */
function instantOrNaN(value: unknown, name: string): number {
  if (typeof value !== 'string') return Number.NaN;
  try {
    return instant(value, name).getTime();
  } catch {
    return Number.NaN;
  }
}
