import { createClient, type Client } from 'graphql-ws';
import { request } from 'undici';
import WebSocket from 'ws';
import { createApp, type App, type AppOverrides } from '../../src/app.ts';
import { loadConfig } from '../../src/config/index.ts';
import { collectionHeaders, collectionNotification } from '../../scripts/collection-notifier.ts';
import { onCleanup } from './cleanup.ts';
import { testStoreUrl } from './stores.ts';
import { Inbox, waitFor } from './wait.ts';

export interface GraphQLResponse<T = Record<string, any>> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[];
}

export interface TestApp {
  app: App;
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  graphqlUrl: string;
  query<T = Record<string, any>>(
    query: string,
    variables?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<GraphQLResponse<T>>;
  /** Posts a body (text, bytes, or an object as JSON) to the collection webhook, signed like the bank unless headers say otherwise. */
  deliver(body: unknown, headers?: Record<string, string>, path?: string): Promise<{ status: number; reply: any }>;
  /** A graphql-ws client on this app, closed after the test. */
  wsClient(options?: { connectionParams?: Record<string, unknown>; headers?: Record<string, string> }): Client;
}

/**
 * Starts the real app on a free loopback port with `env` over test defaults (sandbox bank,
 * in-memory SQLite, or a temporary file where the production rules apply, in-memory pub/sub,
 * silent logs), closed after the test.
 */
export async function startApp(
  env: Record<string, string> = {},
  overrides: AppOverrides = {},
  /** Headers every query and WebSocket upgrade carries unless it gives its own (an Authorization, say). */
  { headers: defaults = {} }: { headers?: Record<string, string> } = {},
): Promise<TestApp> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', STORE_URL: testStoreUrl(env), LOG_LEVEL: 'silent', ...env });
  const app = await createApp(config, overrides);
  onCleanup(() => app.close());
  const graphqlUrl = (await app.listen()).replace('localhost', '127.0.0.1');
  const baseUrl = graphqlUrl.replace(/\/graphql$/, '');
  return {
    app,
    baseUrl,
    graphqlUrl,
    async query(query, variables, headers = {}) {
      const response = await request(graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...defaults, ...headers },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await response.body.json()) as Omit<GraphQLResponse, 'status'>;
      return { status: response.statusCode, ...body } as GraphQLResponse<any>;
    },
    async deliver(body, headers, path = '/webhooks/collection') {
      const response = await request(`${baseUrl}${path}`, {
        method: 'POST',
        headers: headers ?? signedHeaders(),
        body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
      });
      const text = await response.body.text();
      return { status: response.statusCode, reply: text ? JSON.parse(text) : undefined };
    },
    wsClient(options = {}) {
      const client = createClient({
        url: graphqlUrl.replace(/^http/, 'ws'),
        webSocketImpl: class extends WebSocket {
          constructor(address: string, protocols?: string | string[]) {
            super(address, protocols, { headers: { ...defaults, ...options.headers } });
          }
        },
        connectionParams: options.connectionParams,
        retryAttempts: 0,
        lazy: true,
      });
      onCleanup(() => client.dispose());
      return client;
    },
  };
}

/**
 * Resolves once `settlementId`, the last notification delivered, heads collectionNotifications.
 * On PostgreSQL pages (and replays) list the settled log only: a commit settles once every older
 * transaction on the server has ended, and suites running beside this one may hold some open.
 * Nothing announces that moment, so the first page is asked for until it does.
 */
export async function untilListed(app: TestApp, settlementId: unknown): Promise<void> {
  await waitFor(async () => {
    const { data } = await app.query('{ collectionNotifications(first: 1) { nodes { settlementId } } }');
    return data?.collectionNotifications.nodes[0]?.settlementId === settlementId ? true : undefined;
  });
}

/**
 * A live `incomingTransfer` subscriber on `app` over graphql-ws: the settlementIds it receives, in
 * order (an Inbox, to wait on). It counts as live once graphql_active_subscriptions says so.
 */
export function liveTransfers(app: TestApp): Inbox<string> {
  const events = new Inbox<string>();
  app.wsClient().subscribe<{ incomingTransfer: { settlementId: string } }>(
    { query: 'subscription { incomingTransfer { settlementId } }' },
    {
      next: (result) => result.data && events.push(result.data.incomingTransfer.settlementId),
      error: () => undefined,
      complete: () => undefined,
    },
  );
  return events;
}

/** The headers the bank's collection service sends, signed with the sandbox's webhook credentials. */
export const signedHeaders = collectionHeaders;

let settlementCounter = 0;

/** A valid collection notification body, as the bank sends it; fields may be overridden or removed (undefined). */
/** A webhook body: the bank's fields, with the ids every test reads as strings. */
export type NotificationBody = Record<string, unknown> & { settlementId: string; sessionId: string; transactionAmount: unknown };

export function notificationBody(overrides: Record<string, unknown> = {}): NotificationBody {
  settlementCounter += 1;
  const settlementId = `2026112214${Date.now()}${settlementCounter}`;
  const sessionId = `090110221122${String(settlementCounter).padStart(6, '0')}`;
  const bank = collectionNotification({ settlementId, sessionId, tranRemarks: 'Payment for order 1043' });
  return {
    ...bank,
    settlementId,
    sessionId,
    transactionAmount: bank.transactionAmount,
    settledAmount: '1489.25',
    feeAmount: '10.00',
    vatAmount: '0.75',
    ...overrides,
  };
}
