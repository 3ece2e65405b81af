/**
 * Reconciliation in tests: an app that checks tokens, whose bank's collection service is the
 * independent fake (test/helpers/fake-collection-bank.ts) signing with the app's own webhook pair, so
 * a queued op 17 reaches its webhook; an operator's token; and the queries of `bankTransaction` and
 * `reconcileCollections`.
 *
 *   const bank = await startFakeCollectionBank(SANDBOX_PAIR);
 *   const { app, operator } = await startReconcilingApp(bank);
 *   bank.know(transferOf(notificationBody()));               // transferOf: ./confirming.ts
 *   await check(app, operator, { settlementId: '…' });    // verdict MISSING_HERE
 */
import type { AppOverrides } from '../../src/app.ts';
import { sandboxCredentials } from '../../src/sandbox/credentials.ts';
import { startApp, type GraphQLResponse, type TestApp } from './app.ts';
import { createTestClients, sandboxCollectionCredentials, urlsAt } from './bank-clients.ts';
import type { FakeCollectionBank, FakeCollectionOptions } from './fake-collection-bank.ts';
import { call, postJson } from './sandbox.ts';
import { bearer, TEST_AUDIENCE, TEST_ISSUER, TestIssuer, writeJwksFile } from './tokens.ts';

/** The fake's pair when it must deliver to an app's webhook: the sandbox's, which the app expects by default. */
export const SANDBOX_PAIR: FakeCollectionOptions = {
  clientId: sandboxCredentials.webhookClientId,
  clientSecret: sandboxCredentials.webhookClientSecret,
};

export interface ReconcilingApp {
  app: TestApp;
  issuer: TestIssuer;
  /** Headers of a token with scope `collections:reconcile` only. */
  operator: Record<string, string>;
}

/**
 * An app under the sandbox rules that checks tokens of its own issuer, with every bank area on
 * `bank` (the fake, started with SANDBOX_PAIR) and `env` over that. The fake delivers to its webhook.
 * Queries and subscriptions carry a token with `collections:read:all` unless they give their own.
 */
export async function startReconcilingApp(
  bank: FakeCollectionBank,
  env: Record<string, string> = {},
  overrides: AppOverrides = {},
): Promise<ReconcilingApp> {
  const issuer = await TestIssuer.create();
  const { clients } = createTestClients(urlsAt(bank.url), { collectionCredentials: sandboxCollectionCredentials, timeoutMs: 2_000 });
  const auth = { AUTH_JWKS_URL: writeJwksFile(issuer), AUTH_ISSUER: TEST_ISSUER, AUTH_AUDIENCE: TEST_AUDIENCE };
  const app = await startApp(
    { ...auth, ...env },
    { bank: clients, ...overrides },
    { headers: await tokenFor(issuer, 'collections:read:all') },
  );
  bank.deliverTo(`${app.baseUrl}/webhooks/collection`);
  return { app, issuer, operator: await tokenFor(issuer, 'collections:reconcile') };
}

/** Headers of a token of `issuer` with `scope`. */
export async function tokenFor(issuer: TestIssuer, scope: string): Promise<Record<string, string>> {
  return bearer(await issuer.sign({ scope, audience: TEST_AUDIENCE, subject: 'ops-ada' }));
}

export const CHECK = `query ($sessionId: String, $settlementId: String) {
  bankTransaction(sessionId: $sessionId, settlementId: $settlementId) {
    verdict differences
    atBank { sessionId settlementId accountNumber transactionAmount settledAmount feeAmount vatAmount currency narration sourceBankCode transactionTime settledAt acknowledged raw }
    stored { settlementId sessionId transactionAmount source rawBody }
    quarantined { id kind reason settlementId sessionId }
  }
}`;

export const RECONCILE = `mutation ($sessionIds: [String!], $settlementIds: [String!], $recover: RecoverMode) {
  reconcileCollections(sessionIds: $sessionIds, settlementIds: $settlementIds, recover: $recover) {
    checked matched missingHere mismatched notAtBank unknown recovered failed
    items { id verdict differences recovered error quarantined { kind reason settlementId sessionId } }
  }
}`;

/** Op 17's `00` with no delivery after it: the bank says it queued the notification, and never sends it. */
export const QUEUED_NEVER_SENT = {
  status: 200,
  body: { requestSuccessful: true, responseCode: '00', responseMessage: 'Transaction has been queued for repush' },
} as const;

/** `bankTransaction` for one id, as `headers`' caller. */
export function check(
  app: TestApp,
  headers: Record<string, string>,
  ids: { sessionId?: string; settlementId?: string },
): Promise<GraphQLResponse> {
  return app.query(CHECK, ids, headers);
}

/** `reconcileCollections` for a list, as `headers`' caller. */
export function reconcile(
  app: TestApp,
  headers: Record<string, string>,
  variables: { sessionIds?: string[]; settlementIds?: string[]; recover?: 'NONE' | 'REPUSH' | 'IMPORT' },
): Promise<GraphQLResponse> {
  return app.query(RECONCILE, variables, headers);
}

/** What the in-process sandbox bank's console made: its ids and op 14's body. */
export interface ConsoleTransfer {
  settlementId: string;
  sessionId: string;
  notification: Record<string, string>;
  delivered: boolean;
  webhook?: { status: number; reply: { responseCode: string } };
}

/** A transfer made on the console of `app`'s in-process sandbox bank: delivered, or `lost` (recorded, never delivered). */
export async function sandboxTransfer(
  app: TestApp,
  order: { accountNumber?: string; amount?: string; lost?: boolean },
): Promise<ConsoleTransfer> {
  const { collectionConsole } = (await call(`${app.baseUrl}/sandbox/bank`)).json as { collectionConsole: string };
  const made = await postJson(`${collectionConsole}/transfers`, { accountNumber: '0123456789', amount: '1500.00', ...order });
  if (made.status !== 201) throw new Error(`the sandbox bank refused the transfer: ${made.text}`);
  return made.json as ConsoleTransfer;
}
