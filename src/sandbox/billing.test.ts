import { describe, expect, it } from 'vitest';
import { sandboxCredentials } from './credentials.ts';
import { accountHeaders, basic, call, useSandbox } from '../../test/helpers/sandbox.ts';

const sandbox = useSandbox();
const authorization = basic(sandboxCredentials.billingUsername, sandboxCredentials.billingPassword);

describe('op 6, bill categories', () => {
  it('answers the JSON array of categories', async () => {
    const { status, json } = await call(`${sandbox().urls.billing}/categories`, { headers: { authorization } });
    expect(status).toBe(200);
    expect(json).toEqual([
      { category_id: 1, list_order: '1', name: 'Airtime' },
      { category_id: 2, list_order: '2', name: 'Data Bundles' },
      { category_id: 3, list_order: '3', name: 'Cable TV' },
      { category_id: 4, list_order: '4', name: 'Electricity' },
      { category_id: 5, list_order: '5', name: 'Internet Services' },
      { category_id: 6, list_order: '6', name: 'Education' },
    ]);
  });
});

describe('op 7, bills by category', () => {
  it('answers the bills assigned to a category as bill objects', async () => {
    const { status, json } = await call(`${sandbox().urls.billing}/bill/assigned/byCategoryId/3`, { headers: { authorization } });
    expect(status).toBe(200);
    expect(json.map((bill: { name: string }) => bill.name)).toEqual(['DSTV', 'GOtv', 'StarTimes']);
    expect(json[0]).toEqual({
      bill_id: 301,
      name: 'DSTV',
      category_id: 3,
      bill_code: 'DSTV',
      description: expect.any(String),
      fee: '100.00',
      list_order: '1',
    });
  });

  it.each([
    ['a category with no bills', '6'],
    ['an unknown category', '99'],
  ])('answers [] for %s', async (_name, id) => {
    const url = `${sandbox().urls.billing}/bill/assigned/byCategoryId/${id}`;
    const { status, json } = await call(url, { headers: { authorization } });
    expect(status).toBe(200);
    expect(json).toEqual([]);
  });

  it('answers 400 to a category id that is not an integer', async () => {
    const { status } = await call(`${sandbox().urls.billing}/bill/assigned/byCategoryId/cable`, { headers: { authorization } });
    expect(status).toBe(400);
  });
});

describe('bill-payment area credentials', () => {
  it.each([
    ['no Authorization', {}],
    ['a wrong password', { authorization: basic(sandboxCredentials.billingUsername, 'wrong') }],
    ['a wrong username', { authorization: basic('someone', sandboxCredentials.billingPassword) }],
    ['the account-area token', { authorization: accountHeaders.authorization }],
    ['Basic without a colon', { authorization: `Basic ${Buffer.from('sandbox-billing').toString('base64')}` }],
  ])('answers 401 with a Basic challenge given %s', async (_name, headers) => {
    for (const path of ['/categories', '/bill/assigned/byCategoryId/1']) {
      const { status, headers: answer } = await call(`${sandbox().urls.billing}${path}`, { headers });
      expect(status).toBe(401);
      expect(answer['www-authenticate']).toBe('Basic realm="provipay"');
    }
  });
});
