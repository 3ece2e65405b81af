/**
 * Bank calls priced by the length of a list argument, which `@listSize` cannot say (its slicing
 * arguments are numbers that size the list a field returns): `reconcileCollections` is priced as one
 * bank call for each distinct id it checks (op 15 or 16), as the contract fixes it, whatever `recover`
 * says; a `REPUSH` of one it finds missing (op 17) is part of that id's price, spent outside the
 * running budget (context.ts). So the estimate refuses a list dearer than `MAX_OPERATION_COST`
 * before the bank is asked anything, and the running budget never cuts a list short. These prices
 * live beside `@cost`, as the store reads' do (store-reads.ts).
 */
import { MAX_RECONCILE_IDS } from '../validation.ts';

/** The bank calls of `Type.field` priced by its id lists, with these arguments; 0 for anything else. */
export function idListPrice(parentType: string, fieldName: string, args: Record<string, unknown>): number {
  if (parentType !== 'Mutation' || fieldName !== 'reconcileCollections') return 0;
  const lists = [args.sessionIds, args.settlementIds].filter((list) => list !== undefined && list !== null);
  const [ids] = lists;
  // A call the resolver will refuse (neither list, both, none or too many ids) asks the bank nothing.
  if (lists.length !== 1 || !Array.isArray(ids) || ids.length === 0 || ids.length > MAX_RECONCILE_IDS) return 1;
  const distinct = new Set(ids.map((id) => String(id).trim())).size;
  return distinct;
}
