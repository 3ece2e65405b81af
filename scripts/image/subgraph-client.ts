// The image test's side of the wire: what the router, the bank and a subscriber send a running
// subgraph, over real HTTP and WebSocket, and the token issuer whose keys the container is given.
import { inspect } from 'node:util';
import { createClient } from 'graphql-ws';
import { exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import WebSocket from 'ws';
import { collectionHeaders, collectionNotification, type NotificationChoice } from '../collection-notifier.ts';

/** Polls `check` until it returns something other than undefined; fails naming `what` after `expireMs`. */
export async function waitUntil<T>(what: string, check: () => Promise<T | undefined>, expireMs: number): Promise<T> {
  const deadline = performance.now() + expireMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline) throw new Error(`${what}: not within ${expireMs} ms${last ? ` (${inspect(last)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A GET's status, or `refused` when nothing accepts the connection. */
export async function statusOf(url: string): Promise<number | 'refused'> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    await response.arrayBuffer();
    return response.status;
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'refused';
    throw error;
  }
}

export interface GraphQLResult {
  data?: Record<string, any> | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** One GraphQL operation over HTTP, as the router sends it. */
export async function graphql(url: string, query: string, variables: Record<string, unknown> = {}, token?: string): Promise<GraphQLResult> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(10_000),
  });
  if (response.status !== 200) throw new Error(`POST ${url}: HTTP ${response.status}: ${await response.text()}`);
  return (await response.json()) as GraphQLResult;
}

/** One signed collection notification, as the bank's collection service sends it; resolves to its reply's code. */
export async function deliver(url: string, credentials: { clientId: string; secret: string }, choice: NotificationChoice): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: collectionHeaders(credentials.clientId, credentials.secret),
    body: JSON.stringify(collectionNotification(choice)),
    signal: AbortSignal.timeout(10_000),
  });
  const reply = (await response.json()) as { responseCode?: string };
  if (response.status !== 200 || reply.responseCode === undefined)
    throw new Error(`POST ${url}: HTTP ${response.status}: ${JSON.stringify(reply)}`);
  return reply.responseCode;
}

export interface Subscriber {
  /** The settlementIds received, in order. */
  received: string[];
  /** Resolves once `settlementId` has arrived; fails after `expireMs`. */
  receives(settlementId: string, expireMs: number): Promise<void>;
  /** The close code of the socket, once the server closes it. */
  closed: Promise<number>;
  dispose(): Promise<void>;
}

/** An `incomingTransfer` subscriber over graphql-ws, resuming after `cursor` (so nothing stored after it is missed). */
export function subscribe(url: string, token: string, accountNumber: string, after: string): Subscriber {
  const received: string[] = [];
  const waiters = new Set<() => void>();
  const closed = Promise.withResolvers<number>();
  const failed = Promise.withResolvers<never>();
  failed.promise.catch(() => undefined);
  const client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { Authorization: `Bearer ${token}` } });
  client.on('closed', (event) => closed.resolve((event as { code: number }).code));
  client.subscribe<{ incomingTransfer: { settlementId: string } }>(
    {
      query:
        'subscription ($account: String, $after: String) { incomingTransfer(accountNumber: $account, after: $after) { settlementId } }',
      variables: { account: accountNumber, after },
    },
    {
      next: ({ data, errors }) => {
        if (errors) failed.reject(new Error(`subscription error: ${JSON.stringify(errors)}`));
        if (data) received.push(data.incomingTransfer.settlementId);
        for (const wake of [...waiters]) wake();
      },
      error: (error) => failed.reject(error instanceof Error ? error : new Error(`subscription ended: ${JSON.stringify(error)}`)),
      complete: () => undefined,
    },
  );
  return {
    received,
    closed: closed.promise,
    async receives(settlementId, expireMs) {
      const arrived = new Promise<void>((resolve) => {
        const check = () => received.includes(settlementId) && (waiters.delete(check), resolve());
        waiters.add(check);
        check();
      });
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>(
        (_resolve, reject) =>
          (timer = setTimeout(
            () =>
              reject(
                new Error(
                  `the subscriber did not receive ${settlementId} within ${expireMs} ms (received: ${received.join(', ') || 'nothing'})`,
                ),
              ),
            expireMs,
          )),
      );
      await Promise.race([arrived, late, failed.promise]).finally(() => clearTimeout(timer));
    },
    dispose: () => client.dispose() as Promise<void>,
  };
}

/** A token issuer of the test's own: a fresh key, its JWKS, and tokens it signs. */
export async function createIssuer(
  issuer: string,
  audience: string,
): Promise<{ jwks: { keys: JWK[] }; sign(scope: string): Promise<string> }> {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = 'image-test';
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' }] };
  return {
    jwks,
    sign: (scope) =>
      new SignJWT({ scope })
        .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject('image-test')
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(privateKey),
  };
}
