// A bank list as long as NIP's real one (several hundred institutions), for `banks` on the long list
// (protocol.ts, LONG_LIST): the list itself, which the bare-Apollo floor serves from memory, and a
// stand-in bank that sends it to ours as op 2 does.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sandboxBanks } from '../../src/sandbox/data.ts';
import { SANDBOX_PREFIXES } from '../../src/sandbox/index.ts';

const TOWNS = ['Abeokuta', 'Enugu', 'Ibadan', 'Jos', 'Kaduna', 'Kano', 'Lokoja', 'Makurdi', 'Onitsha', 'Owerri', 'Sokoto', 'Uyo'];

/** A bank list of `size` entries in op 2's fields: the sandbox's banks, then made-up microfinance banks. */
export function benchBankList(size: number): { bankCode: string; bankName: string }[] {
  const made = Array.from({ length: Math.max(size - sandboxBanks.length, 0) }, (_, i) => ({
    bankCode: `08${String(i + 1).padStart(4, '0')}`,
    bankName: `${TOWNS[i % TOWNS.length]} Microfinance Bank ${Math.floor(i / TOWNS.length) + 1}`,
  }));
  return [...sandboxBanks.map(({ bankCode, bankName }) => ({ bankCode, bankName })), ...made].slice(0, size);
}

/**
 * A stand-in for the bank's account area that lists `size` banks (op 2) at the sandbox's path and
 * answers anything else 404: ours over it serves `banks`, and nothing that needs another operation.
 */
export async function startBankListStandIn(size: number): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const body = JSON.stringify({ banks: benchBankList(size), responseCode: '00', responseMessage: 'Approved or completed successfully' });
  const listing = `${SANDBOX_PREFIXES.base}/v1/account/NIP/banks`;
  const server = createServer((request, response) => {
    const found = request.method === 'GET' && request.url === listing;
    response.writeHead(found ? 200 : 404, { 'content-type': 'application/json' }).end(found ? body : '{"responseCode":"404"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}${SANDBOX_PREFIXES.base}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
