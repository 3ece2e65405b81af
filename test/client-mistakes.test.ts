import { createHash } from 'node:crypto';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers/app.ts';
import { startCallbackRouter } from './helpers/callback-router.ts';
import { captureLogs } from './helpers/logs.ts';

// A client's mistake is answered as one: a 4xx with a code that says what to fix, never
// INTERNAL_SERVER_ERROR, and never an error-level line (with a stack) in the log.

const SUBSCRIPTION = 'subscription { incomingTransfer { settlementId } }';

/** An app whose log lines are kept, and what it answers to a raw POST /graphql body. */
async function startLogged(): Promise<{
  app: TestApp;
  logs: ReturnType<typeof captureLogs>;
  post: (body: unknown) => Promise<{ status: number; body: any }>;
}> {
  const logs = captureLogs('debug');
  const app = await startApp({}, { logger: logs.logger });
  const post = async (body: unknown) => {
    const response = await request(app.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json;callbackSpec=1.0' },
      body: JSON.stringify(body),
    });
    return { status: response.statusCode, body: await response.body.json() };
  };
  return { app, logs, post };
}

/** Log lines at error level or above (pino's 50), or carrying a stack. */
function errorLines(logs: ReturnType<typeof captureLogs>) {
  return logs.logs.filter((entry) => (entry.level as number) >= 50 || JSON.stringify(entry).includes('"stack"'));
}

describe('client mistakes at /graphql', () => {
  it('answers a body that is not JSON, an empty one and one over the limit in GraphQL shape, with BAD_REQUEST', async () => {
    const { app, logs } = await startLogged();
    const raw = async (body: string) => {
      const response = await request(app.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      return { status: response.statusCode, body: (await response.body.json()) as { errors: { message: string; extensions: unknown }[] } };
    };
    for (const [body, status] of [
      ['{"query": ', 400],
      ['', 400],
      [JSON.stringify({ query: `{ __typename }`, variables: { pad: 'x'.repeat(2 * 1024 * 1024) } }), 413],
    ] as const) {
      const answer = await raw(body);
      expect(answer.status, body.slice(0, 20)).toBe(status);
      expect(answer.body.errors).toEqual([{ message: expect.any(String), extensions: { code: 'BAD_REQUEST' } }]);
    }
    expect(errorLines(logs)).toEqual([]);
  });

  it('answers a subscription sent as a plain POST with HTTP 400, saying how to subscribe', async () => {
    const { logs, post } = await startLogged();
    const { status, body } = await post({ query: SUBSCRIPTION });
    expect(status).toBe(400);
    expect(body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_REQUEST' } })]);
    expect(body.errors[0].message).toMatch(/WebSocket/);
    expect(body.errors[0].message).toMatch(/callback protocol/);
    expect(errorLines(logs)).toEqual([]);
  });

  it.each([
    ['null', null],
    ['a string', 'http://router.invalid/callback'],
    ['an array', [{ callbackUrl: 'http://router.invalid/callback' }]],
    ['a number', 5],
  ])('answers an extensions.subscription that is %s with HTTP 400 naming it, sending nothing', async (_what, subscription) => {
    const router = await startCallbackRouter();
    const { logs, post } = await startLogged();
    const { status, body } = await post({ query: SUBSCRIPTION, extensions: { subscription } });
    expect(status).toBe(400);
    expect(body.errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })]);
    expect(body.errors[0].message).toContain('extensions.subscription');
    expect(router.messages).toEqual([]);
    expect(errorLines(logs)).toEqual([]);
  });

  it('answers the callback extension on an operation that is not a subscription with HTTP 400, sending nothing', async () => {
    const router = await startCallbackRouter();
    const { logs, post } = await startLogged();
    const extension = { callbackUrl: router.callbackUrl, subscriptionId: 'id-1', verifier: 'v', heartbeatIntervalMs: 0 };
    const { status, body } = await post({ query: '{ banks { code } }', extensions: { subscription: extension } });
    expect(status).toBe(400);
    expect(body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_REQUEST' } })]);
    expect(router.messages).toEqual([]);
    expect(errorLines(logs)).toEqual([]);
  });

  it("answers a persisted query whose hash does not match with Apollo's PERSISTED_QUERY_HASH_MISMATCH", async () => {
    const { logs, post } = await startLogged();
    const query = '{ banks { code } }';
    const wrong = createHash('sha256').update('{ bank(code: "000023") { name } }').digest('hex');
    const mismatch = await post({ query, extensions: { persistedQuery: { version: 1, sha256Hash: wrong } } });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_HASH_MISMATCH' }) }),
    ]);

    const version = await post({ query, extensions: { persistedQuery: { version: 2, sha256Hash: wrong } } });
    expect(version.status).toBe(400);
    expect(version.body.errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'PERSISTED_QUERY_NOT_SUPPORTED' }) }),
    ]);

    // The protocol itself still works: a hash alone is unknown until registered with its query.
    const hash = createHash('sha256').update(query).digest('hex');
    const unknown = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(unknown.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await post({ query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).body.errors).toBeUndefined();
    expect((await post({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).body.data.banks.length).toBeGreaterThan(0);
    expect(errorLines(logs)).toEqual([]);
  });
});
