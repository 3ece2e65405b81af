/**
 * A fake bank that answers the read operations the way the bank does (name enquiry, bank list, BVN,
 * bill categories and bills, posting lookup), refuses the wallet and OAuth calls, and counts what
 * reaches it. For tests of how many bank calls an operation makes; `intercept` lets a test answer
 * first (a 503, a reset, an answer held back).
 *
 *   const bank = await startCountingBank({ categories: 12 });
 *   const app = await startLiveApp(bank.url);
 *   expect(bank.calls('lookupAccount')).toBe(1);
 */
import type { AppOverrides } from '../../src/app.ts';
import { SANDBOX_PREFIXES } from '../../src/sandbox/index.ts';
import { startApp, type TestApp } from './app.ts';
import { startFakeBank, type FakeBank, type FakeBankReply, type FakeBankRequest } from './fake-bank.ts';
import { LOOPBACK_SOURCES, productionHeaders, TEST_AUTH } from './production.ts';

export type BankOperation =
  | 'lookupAccount'
  | 'listBanks'
  | 'lookupBvn'
  | 'listCategories'
  | 'listBills'
  | 'postingLookup'
  | 'wallet'
  | 'oauthAuthorize'
  | 'oauthToken';

export interface CountingBankOptions {
  /** How many bill categories the bank lists (each with two bills). Default 6. */
  categories?: number;
  /** Answers before the normal one: return true when it answered (or hung) the request itself. */
  intercept?: (operation: BankOperation, request: FakeBankRequest, reply: FakeBankReply) => boolean | Promise<boolean>;
}

export interface CountingBank extends FakeBank {
  /** Requests that reached the bank for `operation` (all of them when omitted). */
  calls(operation?: BankOperation): number;
}

/** Starts the counting bank on a free port; closed with the test (see `startFakeBank`). */
export async function startCountingBank(options: CountingBankOptions = {}): Promise<CountingBank> {
  const categories = options.categories ?? 6;
  const bank = await startFakeBank(async (request, reply) => {
    const operation = operationOf(request);
    if (operation === undefined) return reply.status(404).json({ error: 'Not Found' });
    if (options.intercept && (await options.intercept(operation, request, reply))) return;
    answer(operation, request, reply, categories);
  });
  return Object.assign(bank, {
    calls: (operation?: BankOperation) =>
      operation === undefined ? bank.received.length : bank.received.filter((r) => operationOf(r) === operation).length,
  });
}

/**
 * The app in live mode with every area on `baseUrl`, `env` over it; its queries carry a token that
 * may read everything (a live bank gets the production rules), so only the bank can fail them.
 */
export async function startLiveApp(baseUrl: string, env: Record<string, string> = {}, overrides: AppOverrides = {}): Promise<TestApp> {
  return startApp({ ...liveBankEnv(baseUrl), ...env }, overrides, { headers: await productionHeaders() });
}

/** Every area's `BANK_*_URL` on one server at `baseUrl`, under the paths the sandbox serves them on. */
export function bankUrlsOn(baseUrl: string): Record<string, string> {
  return {
    BANK_BASE_URL: `${baseUrl}${SANDBOX_PREFIXES.base}`,
    BANK_GATEWAY_URL: `${baseUrl}${SANDBOX_PREFIXES.gateway}`,
    BANK_BILLING_URL: `${baseUrl}${SANDBOX_PREFIXES.billing}`,
    BANK_POSTING_URL: `${baseUrl}${SANDBOX_PREFIXES.posting}`,
    BANK_WALLET_URL: `${baseUrl}${SANDBOX_PREFIXES.wallet}`,
  };
}

/** The environment of an app in live mode with every area on `baseUrl` (the paths the bank uses), and the test issuer's tokens. */
export function liveBankEnv(baseUrl: string): Record<string, string> {
  return {
    ...TEST_AUTH,
    ...LOOPBACK_SOURCES,
    UPSTREAM_MODE: 'live',
    ...bankUrlsOn(baseUrl),
    COLLECTION_CONFIRMATION: 'off',
    BANK_API_TOKEN: 'count-token',
    BANK_USERNAME: 'count-user',
    BANK_PASSWORD: 'count-pass',
    BILLING_USERNAME: 'count-billing',
    BILLING_PASSWORD: 'count-billing-pass',
    POSTING_USERNAME: 'count-posting',
    POSTING_PASSWORD: 'count-posting-pass',
    OAUTH_CLIENT_ID: 'count-client',
    OAUTH_CLIENT_SECRET: 'count-secret',
    WEBHOOK_CLIENT_ID: 'count-collection',
    WEBHOOK_CLIENT_SECRET: 'count-webhook-secret',
  };
}

function operationOf({ url }: FakeBankRequest): BankOperation | undefined {
  const path = url.split('?')[0]!;
  if (path === '/bank/account/NIP') return 'lookupAccount';
  if (path === '/bank/v1/account/NIP/banks') return 'listBanks';
  if (path === '/bank/v1/account/bvn') return 'lookupBvn';
  if (path === '/billing/provipay/webapi/categories') return 'listCategories';
  if (path.startsWith('/billing/provipay/webapi/bill/assigned/byCategoryId/')) return 'listBills';
  if (path === '/posting/postingrest/GetNIPAccount') return 'postingLookup';
  if (path.startsWith('/wallet/')) return 'wallet';
  if (path === '/bank/transaction/oauth/authorize/') return 'oauthAuthorize';
  if (path === '/gateway/transaction/oauth/authorize/') return 'oauthToken';
  return undefined;
}

function answer(operation: BankOperation, request: FakeBankRequest, reply: FakeBankReply, categories: number): void {
  const query = new URL(request.url, 'http://bank').searchParams;
  switch (operation) {
    case 'lookupAccount':
      return reply.json(account(query.get('account_number') ?? '', query.get('bank_code') ?? '000023'));
    case 'postingLookup': {
      const body = JSON.parse(request.body) as { accountNumber: string; beneficiaryBank: string };
      return reply.json(account(body.accountNumber, body.beneficiaryBank));
    }
    case 'listBanks':
      return reply.json({ responseCode: '00', banks: [{ bankCode: '000023', bankName: 'Providus Bank' }] });
    case 'lookupBvn':
      return reply.json({ responseCode: '00', bvn: query.get('number'), firstName: 'ADAEZE', lastName: 'OKONKWO' });
    case 'listCategories':
      return reply.json(
        Array.from({ length: categories }, (_, i) => ({ category_id: i + 1, name: `Category ${i + 1}`, list_order: String(i + 1) })),
      );
    case 'listBills': {
      const id = Number(request.url.split('/').pop());
      return reply.json([1, 2].map((n) => ({ id: `${id}-${n}`, name: `Bill ${n} of ${id}`, category_id: id })));
    }
    case 'wallet':
      return reply.status(401).json({ status: false, message: 'Invalid credentials' });
    case 'oauthAuthorize':
    case 'oauthToken':
      return reply.status(400).json({ error: 'invalid_request' });
  }
}

function account(accountNumber: string, bankCode: string) {
  return { responseCode: '00', accountNumber, accountName: 'ADAEZE CHIOMA OKONKWO', bankCode, bvn: '22212345678' };
}
