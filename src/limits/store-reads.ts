/**
 * What the store reads of an operation cost in its budget (`MAX_OPERATION_COST`), in the same units as
 * a bank call, so one document cannot run hundreds of year-long summaries: a page of notifications
 * costs one, a record read by its id costs one (a batch of entity references, one per page's worth),
 * and a range of days costs one for every SUMMARY_DAYS_PER_UNIT days it spans. The screens the
 * README shows still fit beside a few name enquiries, and a year's summary fits alone
 * (docs/schema.md gives the prices of each). These prices depend on arguments the schema's
 * `@cost` cannot read, so they live here, beside it.
 */

/** Days of a summary (or of a ranged page) one unit of the budget pays for. */
export const SUMMARY_DAYS_PER_UNIT = 16;

const DAY_MS = 86_400_000;

/** The most records one page reads, and so one unit of references read together by id. */
const PAGE_ROWS = 100;

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

/** The days [from, to) touches, priced; a range the resolver will refuse costs one (it reads nothing). */
function rangePrice(from: unknown, to: unknown): number {
  const [start, end] = [Date.parse(String(from)), Date.parse(String(to))];
  if (!Number.isFinite(start) || !Number.isFinite(end) || end <= start) return 1;
  // Bank days are cut at the bank's midnight: a range touches at most one day more than it spans.
  const days = Math.ceil((end - start) / DAY_MS) + 1;
  return Math.max(1, Math.ceil(days / SUMMARY_DAYS_PER_UNIT));
}
