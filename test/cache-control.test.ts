import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';

/** Posts an operation as the router would; resolves with the response's Cache-Control and body. */
async function cacheControlOf(app: TestApp, query: string, variables?: Record<string, unknown>) {
  const response = await request(app.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.body.json()) as { data?: unknown; errors?: unknown[] };
  return { cacheControl: response.headers['cache-control'], body };
}

const ENTITIES =
  'query($r: [_Any!]!) { _entities(representations: $r) { ... on Bank { name } ... on BillCategory { name } ... on Account { accountName } } }';
const bank = { __typename: 'Bank', code: '000023' };

describe('Cache-Control for the router and CDNs', () => {
  it.each([
    ['the bank list', '{ banks { code name } }'],
    ['one bank', '{ bank(code: "000023") { code name } }'],
    ['the bill categories', '{ billCategories { id name listOrder } }'],
    ['one bill category', '{ billCategory(id: 1) { name } }'],
    ['the categories with their bills', '{ billCategories { name bills { name } } }'],
    ['the bills of a category', '{ bills(categoryId: 3) { id name raw } }'],
  ])('makes %s public for the bank-list TTL', async (_name, query) => {
    const app = await startApp();
    const { cacheControl, body } = await cacheControlOf(app, query);
    expect(body.errors).toBeUndefined();
    expect(cacheControl).toBe('max-age=600, public');
  });

  it('follows BANK_LIST_TTL_S', async () => {
    const app = await startApp({ BANK_LIST_TTL_S: '60' });
    expect((await cacheControlOf(app, '{ banks { code } }')).cacheControl).toBe('max-age=60, public');
  });

  it('makes Bank and BillCategory entities fetched by the router public', async () => {
    const app = await startApp();
    const banks = await cacheControlOf(app, ENTITIES, { r: [bank, { __typename: 'Bank', code: '000013' }] });
    expect(banks.body).toEqual({ data: { _entities: [{ name: expect.any(String) }, { name: expect.any(String) }] } });
    expect(banks.cacheControl).toBe('max-age=600, public');
    const category = await cacheControlOf(app, ENTITIES, { r: [{ __typename: 'BillCategory', id: 1 }] });
    expect(category.cacheControl).toBe('max-age=600, public');
  });

  it.each([
    ['a name enquiry', '{ account(accountNumber: "0123456789") { accountName } }'],
    ['a name enquiry with its bank', '{ account(accountNumber: "0123456789") { accountName bank { name } } }'],
    [
      'the bank list next to a name enquiry',
      '{ banks { code name } account(accountNumber: "0123456789", bankCode: "000023") { accountName } }',
    ],
    ['a BVN', '{ bvn(number: "22212345678") { firstName } }'],
    ['stored notifications', '{ collectionNotifications { edges { node { settlementId } } } }'],
    ['a wallet mutation', 'mutation { merchantLogin(email: "merchant@sandbox.ng", password: "Sandbox#2026") { accessToken } }'],
    ['an answer with errors', '{ bank(code: "not-a-code") { name } }'],
  ])('answers no-store to %s', async (_name, query) => {
    const app = await startApp();
    expect((await cacheControlOf(app, query)).cacheControl).toBe('no-store');
  });

  it('answers no-store to an entity fetch mixing a Bank with an Account', async () => {
    const app = await startApp();
    const mixed = await cacheControlOf(app, ENTITIES, {
      r: [bank, { __typename: 'Account', accountNumber: '0123456789', bankCode: '000023' }],
    });
    expect(mixed.body.errors).toBeUndefined();
    expect(mixed.cacheControl).toBe('no-store');
  });
});
