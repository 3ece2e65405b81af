import { describe, expect, it } from 'vitest';
import { startFakeBank } from '../../test/helpers/fake-bank.ts';
import { basic, lastReceived, useRecordedSandbox } from '../../test/helpers/sandbox.ts';
import { sandboxCredentials } from '../sandbox/credentials.ts';
import { Secret } from '../secret.ts';
import { createTestClients, expectUpstreamError, sandboxBankCredentials, sandboxSecrets, urlsAt } from '../../test/helpers/bank-clients.ts';

describe('billing client, odd answers', () => {
  it('calls a category without a numeric category_id an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json([{ category_id: 'three', name: 'Cable TV' }]));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.billing.listCategories(), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('calls a bill list that is not an array an invalid response', async () => {
    const bank = await startFakeBank((_request, reply) => reply.json({ bills: 'none' }));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.billing.listBills(3), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('reads other spellings of bill fields and keeps the object as raw', async () => {
    const bill = { billerId: 77, billerName: 'DSTV', categoryId: '3', extra: { min: 100 } };
    const bank = await startFakeBank((_request, reply) => reply.json([bill]));
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.billing.listBills(3)).resolves.toEqual([{ id: '77', name: 'DSTV', categoryId: 3, raw: bill }]);
  });

  it('maps a 401 with WWW-Authenticate to UPSTREAM_UNAUTHORIZED', async () => {
    const bank = await startFakeBank((_request, reply) =>
      reply.status(401).header('www-authenticate', 'Basic realm="provipay"').json({ message: 'Unauthorized' }),
    );
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.billing.listCategories(), 'UPSTREAM_UNAUTHORIZED');
  });
});

describe('billing client against the sandbox (ops 6-7)', () => {
  const sandbox = useRecordedSandbox();
  const clientsFor = () => createTestClients(sandbox().urls, { credentials: sandboxBankCredentials }).clients;

  it('op 6: lists the categories with Basic auth under the /provipay/webapi prefix', async () => {
    const categories = await clientsFor().billing.listCategories();
    expect(categories.map((category) => category.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(categories).toContainEqual({ id: 3, name: 'Cable TV', listOrder: '3' });
    const request = lastReceived(sandbox(), '/categories');
    expect(request).toMatchObject({ method: 'GET', path: '/billing/provipay/webapi/categories' });
    expect(request.headers.authorization).toBe(
      sandbox().fingerprint(basic(sandboxCredentials.billingUsername, sandboxCredentials.billingPassword)),
    );
  });

  it('op 7: lists the bills of a category, kept whole as raw', async () => {
    const bills = await clientsFor().billing.listBills(3);
    expect(bills.length).toBeGreaterThan(0);
    const dstv = bills.find((bill) => bill.name === 'DSTV');
    expect(dstv).toMatchObject({ id: expect.any(String), categoryId: 3 });
    expect(dstv?.raw).toMatchObject({ name: 'DSTV', category_id: 3 });
    for (const bill of bills) expect(bill.categoryId).toBe(3);
    expect(lastReceived(sandbox(), '/byCategoryId/3').path).toBe('/billing/provipay/webapi/bill/assigned/byCategoryId/3');
  });

  it('op 7: a category with no bills is an empty list', async () => {
    await expect(clientsFor().billing.listBills(6)).resolves.toEqual([]);
  });

  it('encodes non-ASCII and colon characters in Basic credentials as UTF-8, refused here as unauthorised', async () => {
    const password = 'pässwörd:with:colons-ñ';
    const credentials = { ...sandboxBankCredentials, billingUsername: 'Ọlá-Adé', billingPassword: new Secret(password) };
    const { clients } = createTestClients(sandbox().urls, { credentials });
    await expectUpstreamError(clients.billing.listCategories(), 'UPSTREAM_UNAUTHORIZED', [...sandboxSecrets, password]);
    // Byte for byte the UTF-8 encoding of the configured pair, colons kept.
    expect(lastReceived(sandbox(), '/categories').headers.authorization).toBe(sandbox().fingerprint(basic('Ọlá-Adé', password)));
  });
});
