/**
 * Confirmation with the bank in tests: an app whose bank's collection service is the independent
 * fake (test/helpers/fake-collection-bank.ts), subscribers of `incomingTransfer` with or without
 * `confirmed`, and reads of a notification's confirmation through the API.
 *
 *   const bank = await startFakeCollectionBank();
 *   const app = await startConfirmingApp(bank);
 *   const body = notificationBody();
 *   bank.know(transferOf(body));            // the bank holds it as delivered
 *   await app.deliver(body);                // 00, then confirmed in the background
 *   await confirmationOf(app, body.settlementId, 'CONFIRMED');
 */
import type { AppOverrides } from '../../src/app.ts';
import { startApp, type TestApp } from './app.ts';
import { createTestClients, urlsAt } from './bank-clients.ts';
import type { FakeCollectionBank, FakeTransfer } from './fake-collection-bank.ts';
import { subscribersLive } from './metrics.ts';
import { Inbox, waitFor } from './wait.ts';

/**
 * An app under the sandbox rules whose bank clients (all areas) are on `bank`: its confirmer asks the
 * fake, with the fake's own pair. Deliveries to its webhook are signed as `app.deliver` signs them.
 */
export async function startConfirmingApp(
  bank: Pick<FakeCollectionBank, 'url'>,
  env: Record<string, string> = {},
  overrides: AppOverrides = {},
): Promise<TestApp> {
  const { clients } = createTestClients(urlsAt(bank.url), { timeoutMs: 2_000 });
  return startApp(env, { bank: clients, ...overrides });
}

/** The transfer the bank holds for a delivered body (`notificationBody()`), amounts as JSON numbers: exactly what was delivered. */
export function transferOf(body: Record<string, unknown>, overrides: Partial<FakeTransfer> = {}): FakeTransfer {
  const text = (field: string) => (typeof body[field] === 'string' ? body[field] : undefined);
  return {
    settlementId: text('settlementId')!,
    sessionId: text('sessionId')!,
    accountNumber: text('accountNumber')!,
    transactionAmount: text('transactionAmount')!,
    settledAmount: text('settledAmount'),
    feeAmount: text('feeAmount'),
    vatAmount: text('vatAmount'),
    currency: text('currency'),
    ...overrides,
  };
}

export interface StoredConfirmation {
  status: string;
  checkedAt: string | null;
  differences: string[];
  acknowledgedByBank: boolean | null;
}

const CONFIRMATION =
  'query ($id: ID!) { collectionNotification(settlementId: $id) { source confirmation { status checkedAt differences acknowledgedByBank } } }';

/** The notification's confirmation as the API reads it, once its status is `status` (waits for it). */
export async function confirmationOf(
  app: TestApp,
  settlementId: unknown,
  status: string,
  expireMs = 10_000,
): Promise<StoredConfirmation & { source: string }> {
  return waitFor(async () => {
    const { data, errors } = await app.query(CONFIRMATION, { id: settlementId });
    if (errors) throw new Error(JSON.stringify(errors));
    const notification = data?.collectionNotification as { source: string; confirmation: StoredConfirmation } | null;
    return notification?.confirmation.status === status ? { source: notification.source, ...notification.confirmation } : undefined;
  }, expireMs);
}

/** One event of a subscriber: the notification's id, status and cursor. */
export interface TransferEvent {
  settlementId: string;
  status: string;
  cursor: string;
}

export type Subscriber = Inbox<TransferEvent> & { ended?: string; errors?: unknown[] };

/**
 * A graphql-ws subscriber of `incomingTransfer` on `app` with these arguments; resolves once the app
 * counts `live` subscriptions in all (this one included), unless it is refused.
 */
export async function subscribe(
  app: TestApp,
  args: { confirmed?: boolean; after?: string; accountNumber?: string } = {},
  live?: number,
): Promise<Subscriber> {
  const events: Subscriber = new Inbox<TransferEvent>();
  app.wsClient().subscribe<{ incomingTransfer: { settlementId: string; cursor: string; confirmation: { status: string } } }>(
    {
      query: `subscription ($confirmed: Boolean, $after: String, $accountNumber: String) {
        incomingTransfer(confirmed: $confirmed, after: $after, accountNumber: $accountNumber) { settlementId cursor confirmation { status } }
      }`,
      variables: args,
    },
    {
      next: (result) => {
        if (result.errors) (events.errors ??= []).push(...result.errors);
        const event = result.data?.incomingTransfer;
        if (event) events.push({ settlementId: event.settlementId, status: event.confirmation.status, cursor: event.cursor });
      },
      error: (error) => {
        (events.errors ??= []).push(error);
        events.ended = 'error';
      },
      complete: () => (events.ended ??= 'complete'),
    },
  );
  if (live !== undefined) await subscribersLive(app, live);
  return events;
}

/** The settlementIds of what a subscriber received, in order. */
export const idsOf = (events: readonly TransferEvent[]) => events.map((event) => event.settlementId);
