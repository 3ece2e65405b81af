import { buildSubgraphSchema } from '@apollo/subgraph';
import { getNamedType, getOperationAST, isListType, isNonNullType, isObjectType, parse, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { createSubgraphSchema } from '../schema.ts';
import { estimateBankCalls } from './cost-estimate.ts';
import { readPrices, type PriceList } from './prices.ts';
import { rawBodiesPerUnit } from './store-reads.ts';

const schema = createSubgraphSchema();
const prices = readPrices(schema);

function estimate(source: string, variables?: Record<string, unknown>, on: GraphQLSchema = schema, list: PriceList = prices): number {
  const document = parse(source);
  return estimateBankCalls(on, list, { document, operation: getOperationAST(document)!, variables });
}

describe('estimateBankCalls over the subgraph schema', () => {
  it('prices the README screen: a name enquiry, the categories, and the bills of 10 assumed categories', () => {
    const screen = `{ banks { code } account(accountNumber: "0123456789", bankCode: "000023") { accountName bank { name } }
      billCategories { id bills { id } } }`;
    expect(estimate(screen)).toBe(1 + 1 + 10);
  });

  it('costs nothing for cached and introspection fields', () => {
    expect(estimate('{ banks { code name } bank(code: "000023") { name } __typename __schema { types { name } } }')).toBe(0);
  });

  it('prices reads by id: one a record, one per hundred entity references', () => {
    expect(estimate('{ collectionNotification(settlementId: "1") { cursor } }')).toBe(1);
    expect(
      estimate('{ a: collectionNotification(settlementId: "1") { cursor } b: collectionNotification(settlementId: "2") { cursor } }'),
    ).toBe(2);
    const entities = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on CollectionNotification { cursor } } }';
    const references = (n: number) => ({
      r: Array.from({ length: n }, (_, i) => ({ __typename: 'CollectionNotification', settlementId: String(i) })),
    });
    expect(estimate(entities, references(1))).toBe(1);
    expect(estimate(entities, references(100))).toBe(1);
    expect(estimate(entities, references(2_500))).toBe(25);
  });

  it('prices store reads: a page one, a range of days one per 16 days it touches', () => {
    expect(estimate('{ collectionNotifications(first: 100) { nodes { settlementId } } }')).toBe(1);
    expect(estimate('{ collectionNotifications(from: "2026-11-01T00:00:00Z") { nodes { settlementId } } }')).toBe(1);
    expect(
      estimate('{ quarantinedDeliveries(first: 100, from: "2025-11-01T00:00:00Z", to: "2026-11-01T00:00:00Z") { nodes { id } } }'),
    ).toBe(1);
    const aliased = Array.from({ length: 30 }, (_, i) => `q${i}: quarantinedDeliveries { nodes { id } }`).join(' ');
    expect(estimate(`{ ${aliased} }`)).toBe(30);
    const month = '{ collectionSummary(from: "2026-10-01T00:00:00+01:00", to: "2026-11-01T00:00:00+01:00") { count days { date count } } }';
    expect(estimate(month)).toBe(2);
    const year = 'query($from: DateTime!, $to: DateTime!) { collectionSummary(from: $from, to: $to) { count } }';
    expect(estimate(year, { from: '2025-11-26T00:00:00Z', to: '2026-11-26T00:00:00Z' })).toBe(23);
    expect(
      estimate('{ collectionNotifications(from: "2025-11-26T00:00:00Z", to: "2026-11-26T00:00:00Z") { nodes { settlementId } } }'),
    ).toBe(23);
    const aliases = Array.from({ length: 100 }, (_, i) => `s${i}: collectionSummary(from: $from, to: $to) { count }`).join(' ');
    expect(
      estimate(`query($from: DateTime!, $to: DateTime!) { ${aliases} }`, { from: '2025-11-26T00:00:00Z', to: '2026-11-26T00:00:00Z' }),
    ).toBe(2_300);
  });

  it('reads a range as its resolver reads it: an end it would refuse prices the range as one, an offset it reads as the time it means', () => {
    const year = 'query($from: DateTime!, $to: DateTime!) { collectionSummary(from: $from, to: $to) { count } }';
    // Date.parse reads no time in these; the resolver reads a year.
    expect(estimate(year, { from: '2025-11-26T00:00:00+99:00', to: '2026-11-26T00:00:00+99:00' })).toBe(23);
    expect(estimate(year, { from: '2025-11-26T00:00:00+05:75', to: '2026-11-26T00:00:00+05:75' })).toBe(23);
    // The resolver refuses 30 February (it reads nothing); Date.parse would read 2 March.
    expect(estimate(year, { from: '2025-11-26T00:00:00Z', to: '2026-02-30T00:00:00Z' })).toBe(1);
  });

  it('prices raw bodies by how many a root field returns: one unit more per 10, each alias and list counted', () => {
    const page = (first: number, fields: string) => `{ quarantinedDeliveries(first: ${first}) { nodes { ${fields} } } }`;
    expect(estimate(page(100, 'id reason'))).toBe(1);
    expect(estimate(page(100, 'rawBody'))).toBe(1 + 10);
    expect(estimate(page(100, 'rawBody rawBodyBase64'))).toBe(1 + 20);
    expect(estimate(page(15, 'rawBody'))).toBe(1 + 2);
    expect(estimate(page(5, 'a: rawBody b: rawBody'))).toBe(1 + 1);
    // Unsized, a page holds 20; refused by its resolver, none.
    expect(estimate('{ collectionNotifications { edges { node { rawBody } } nodes { rawBodyBase64 } } }')).toBe(1 + 4);
    expect(estimate(page(101, 'rawBody'))).toBe(1);
    expect(estimate('query($n: Int) { collectionNotifications(first: $n) { nodes { rawBody } } }', { n: 100 })).toBe(1 + 10);
    const aliased = Array.from({ length: 5 }, (_, i) => `q${i}: quarantinedDeliveries(first: 100) { nodes { rawBody rawBodyBase64 } }`);
    expect(estimate(`{ ${aliased.join(' ')} }`)).toBe(5 * 21);
    expect(estimate('{ collectionNotification(settlementId: "1") { rawBody } }')).toBe(1 + 1);
    const entities = 'query($r: [_Any!]!) { _entities(representations: $r) { ... on CollectionNotification { rawBody } } }';
    const r = Array.from({ length: 2_000 }, (_, i) => ({ __typename: 'CollectionNotification', settlementId: String(i) }));
    expect(estimate(entities, { r })).toBe(20 + 200);
    // A check lists up to 100 deliveries beside a transfer; a reconciliation an item per id.
    expect(estimate('{ bankTransaction(settlementId: "S1") { quarantined { reason } } }')).toBe(1);
    expect(estimate('{ bankTransaction(settlementId: "S1") { stored { rawBody } quarantined { rawBody } } }')).toBe(1 + 11);
  });

  it("sizes a reconciliation's items by its ids, each listing up to 100 deliveries", () => {
    const reconciling = buildSubgraphSchema([
      {
        typeDefs: parse(`
        type Query { ok: Boolean }
        type Mutation { reconcileCollections(sessionIds: [String!], settlementIds: [String!]): ReconcileReport }
        type ReconcileReport { items: [ReconcileItem!]! }
        type ReconcileItem { id: String! quarantined: [QuarantinedDelivery!]! }
        type QuarantinedDelivery { id: ID! rawBody: String! }
      `),
      },
    ]);
    const reconcile = 'mutation($t: [String!]) { reconcileCollections(settlementIds: $t) { items { quarantined { rawBody } } } }';
    // Two ids (one bank call each), 200 raw bodies.
    expect(estimate(reconcile, { t: ['T-1', 'T-2'] }, reconciling, readPrices(reconciling))).toBe(2 + 20);
    expect(estimate(reconcile, {}, reconciling, readPrices(reconciling))).toBe(1);
  });

  it('pays for fewer raw bodies a unit as WEBHOOK_MAX_BODY_BYTES lets them grow, never more than 10', () => {
    expect([1024, 64 * 1024, 128 * 1024, 1024 * 1024].map(rawBodiesPerUnit)).toEqual([10, 10, 5, 1]);
    const page = '{ quarantinedDeliveries(first: 100) { nodes { rawBody } } }';
    const document = parse(page);
    expect(estimateBankCalls(schema, prices, { document, operation: getOperationAST(document)! }, rawBodiesPerUnit(1024 * 1024))).toBe(101);
  });

  it('counts every alias, and merges fields that execution merges', () => {
    expect(estimate('{ a: bvn(number: "22212345678") { bvn } b: bvn(number: "22298765432") { bvn } }')).toBe(2);
    const merged = `{ billCategories { id } billCategories { bills { id } } ...More }
      fragment More on Query { billCategories { name } }`;
    expect(estimate(merged)).toBe(1 + 10);
  });

  it('follows fragments and inline fragments, and counts @skip/@include as included', () => {
    const source = `query($no: Boolean!) {
      ...Lookups
      ... on Query { postingAccount(accountNumber: "0123456789", beneficiaryBank: "000013") { accountName } }
      bills(categoryId: 3) @include(if: $no) { id }
    }
    fragment Lookups on Query { account(accountNumber: "0123456789") @skip(if: true) { accountName } }`;
    expect(estimate(source, { no: false })).toBe(3);
  });

  it('prices each mutation that calls the bank', () => {
    expect(
      estimate(
        'mutation { merchantForgotPassword(email: "a@b.ng") { status } transactionAuthorize(redirectUri: "https://a.b/c") { code } }',
      ),
    ).toBe(2);
  });

  it('prices a check with the bank as one call, and a reconciliation one per distinct id, whatever it recovers', () => {
    expect(estimate('{ bankTransaction(settlementId: "S1") { verdict stored { cursor } quarantined { id } } }')).toBe(1);
    const reconcile =
      'mutation($s: [String!], $t: [String!], $r: RecoverMode) { reconcileCollections(sessionIds: $s, settlementIds: $t, recover: $r) { checked } }';
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `T-${i}`);
    expect(estimate(reconcile, { t: ids(30) })).toBe(30);
    expect(estimate(reconcile, { s: ids(30), r: 'IMPORT' })).toBe(30);
    expect(estimate(reconcile, { t: ids(30), r: 'REPUSH' })).toBe(30);
    expect(estimate(reconcile, { t: [...ids(3), 'T-1', ' T-2 '] })).toBe(3);
    // What the resolver refuses asks the bank nothing: its BAD_USER_INPUT is the answer, not a cost refusal.
    expect(estimate(reconcile, { t: ids(201) })).toBe(1);
    expect(estimate(reconcile, { t: [] })).toBe(1);
    expect(estimate(reconcile, { s: ids(2), t: ids(2) })).toBe(1);
    expect(estimate(reconcile, {})).toBe(1);
  });

  it('prices entity references by their count and type, from variables or literals', () => {
    const query =
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Account { accountName bank { name } } ... on BillCategory { bills { id } } } }';
    const r = [
      ...Array.from({ length: 7 }, () => ({ __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' })),
      { __typename: 'Bank', code: '000023' },
      { __typename: 'BillCategory', id: 3 },
    ];
    expect(estimate(query, { r })).toBe(7 + 0 + 1);
    expect(estimate('{ _entities(representations: [{__typename: "Account", accountNumber: "1", bankCode: "2"}]) { __typename } }')).toBe(1);
  });

  it('keeps every priced list sized: a list over bank-calling fields carries @listSize', () => {
    // Otherwise such a list would count as DEFAULT_LIST_SIZE items and the estimate would run low.
    const unsized: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        const list = isListType(isNonNullType(field.type) ? field.type.ofType : field.type);
        const item = getNamedType(field.type);
        if (!list || !isObjectType(item) || field.name === '_entities') continue;
        const dear = Object.values(item.getFields()).some((child) => (prices.fieldWeight(item.name, child.name) ?? 0) > 0);
        if (dear && prices.listSize(type.name, field.name) === undefined) unsized.push(`${type.name}.${field.name}`);
      }
    }
    expect(unsized).toEqual([]);
  });
});

describe('estimateBankCalls with slicing arguments', () => {
  const sliced = buildSubgraphSchema([
    {
      typeDefs: parse(`
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@cost", "@listSize"])
      type Query { items(first: Int, last: Int): [Item!]! @listSize(slicingArguments: ["first", "last"], assumedSize: 50) }
      type Item { detail: Detail @cost(weight: 2) }
      type Detail { id: ID }
    `),
    },
  ]);
  const slicedPrices = readPrices(sliced);

  it('multiplies by the largest slicing argument given, else by the assumed size', () => {
    expect(estimate('{ items(first: 3) { detail { id } } }', {}, sliced, slicedPrices)).toBe(6);
    expect(estimate('query($n: Int) { items(first: 2, last: $n) { detail { id } } }', { n: 4 }, sliced, slicedPrices)).toBe(8);
    expect(estimate('{ items { detail { id } } }', {}, sliced, slicedPrices)).toBe(100);
  });
});
