// Operators read the webhook's quarantine and record their reviews through GraphQL, under scope
// collections:review: on both stores, through the real server, with real tokens.
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { notificationBody, signedHeaders, startApp, type TestApp } from './helpers/app.ts';
import { captureLogs } from './helpers/logs.ts';
import { scrape } from './helpers/metrics.ts';
import { startSubgraphProcess } from './helpers/process.ts';
import { urlStoreBackends, type UrlTestDatabase } from './helpers/stores.ts';
import { bearer, TEST_AUDIENCE, TEST_ISSUER, TestIssuer, writeJwksFile } from './helpers/tokens.ts';
import { waitFor } from './helpers/wait.ts';

const FIELDS = `id kind reason detail responseCode receivedAt sessionId settlementId accountNumber rawBody rawBodyBase64 reviewedAt reviewNote reviewedBy`;
const LIST = `query($first: Int, $after: String, $kind: QuarantineKind, $reviewed: Boolean, $from: DateTime, $to: DateTime) {
  quarantinedDeliveries(first: $first, after: $after, kind: $kind, reviewed: $reviewed, from: $from, to: $to) {
    nodes { ${FIELDS} }
    edges { cursor node { id } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const REVIEW = `mutation($id: ID!, $note: String!) { reviewQuarantinedDelivery(id: $id, note: $note) { ${FIELDS} } }`;

const KEPT = 'collection notification kept in the quarantine';

/** The environment of a subgraph that checks tokens of `issuer`, on `database`. */
function guardedEnv(issuer: TestIssuer, database: UrlTestDatabase): Record<string, string> {
  return { STORE_URL: database.storeUrl, AUTH_JWKS_URL: writeJwksFile(issuer), AUTH_ISSUER: TEST_ISSUER, AUTH_AUDIENCE: TEST_AUDIENCE };
}

describe.each(urlStoreBackends.filter((backend) => backend.enabled))('the quarantine over GraphQL on $name', (backend) => {
  async function start() {
    const issuer = await TestIssuer.create();
    const database = await backend.create();
    const { logger, logged } = captureLogs();
    const app = await startApp(guardedEnv(issuer, database), { logger });
    const operator = bearer(await issuer.sign({ scope: 'collections:review', audience: TEST_AUDIENCE }));
    const reader = bearer(await issuer.sign({ scope: 'collections:read:all', audience: TEST_AUDIENCE }));
    /** Delivers `body` (text or bytes) signed, and resolves once the quarantine has kept it. */
    const refuse = async (sessionId: string, body: string | Buffer) => {
      const response = await request(`${app.baseUrl}/webhooks/collection`, { method: 'POST', headers: signedHeaders(), body });
      const reply = (await response.body.json()) as { responseCode: string };
      await logged((line) => line.msg === KEPT && line.sessionId === sessionId);
      return reply.responseCode;
    };
    const list = async (variables: Record<string, unknown> = {}, headers = operator) => app.query(LIST, variables, headers);
    return { app, issuer, database, operator, reader, refuse, list, logged };
  }

  it('lists what the webhook kept, newest first, each kind with its body byte for byte', async () => {
    const { app, database, refuse, list, logged } = await start();
    const oddWhitespace = ` {\r\n\t"sessionId":"S-nine" ,"accountNumber" : "012345678",\n  "settlementId":"STL-9"}\t\n`;
    const notUtf8 = Buffer.concat([Buffer.from('{"sessionId":"S-bytes",'), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from('}')]);
    expect(await refuse('S-nine', oddWhitespace)).toBe('02');
    const first = notificationBody({ sessionId: 'S-first' });
    expect((await app.deliver(first)).reply.responseCode).toBe('00');
    const conflict = JSON.stringify({ ...first, sessionId: 'S-conflict', transactionAmount: '950000.00' });
    expect(await refuse('S-conflict', conflict)).toBe('01');
    const poison = notificationBody({ sessionId: 'S-poison', settlementId: `8${Date.now()}` });
    await database.refuseRow(poison.settlementId);
    expect(await refuse('S-poison', JSON.stringify(poison))).toBe('02');
    // Not JSON: no sessionId could be read from it, so its log line is found by its reason.
    await request(`${app.baseUrl}/webhooks/collection`, { method: 'POST', headers: signedHeaders(), body: notUtf8 });
    await logged((line) => line.msg === KEPT && line.reason === 'body_not_json_object');

    const { data, errors } = await list();
    expect(errors).toBeUndefined();
    const nodes = data!.quarantinedDeliveries.nodes as Record<string, unknown>[];
    expect(nodes.map((node) => [node.kind, node.reason, node.responseCode, node.sessionId])).toEqual([
      ['REJECTED', 'body_not_json_object', '02', null],
      ['UNSTORABLE', 'store_refused_row', '02', 'S-poison'],
      ['CONFLICT', 'conflicting_duplicate', '01', 'S-conflict'],
      ['REJECTED', 'invalid_account_number', '02', 'S-nine'],
    ]);
    expect(Buffer.from(nodes[0]!.rawBodyBase64 as string, 'base64')).toEqual(notUtf8);
    expect(nodes[1]).toMatchObject({ rawBody: JSON.stringify(poison), settlementId: poison.settlementId, accountNumber: '0123456789' });
    expect(nodes[2]).toMatchObject({
      rawBody: conflict,
      settlementId: first.settlementId,
      detail: 'transactionAmount 950000.00 (stored 1500.00)',
    });
    expect(nodes[3]).toMatchObject({
      rawBody: oddWhitespace,
      settlementId: 'STL-9',
      accountNumber: '012345678',
      reviewedAt: null,
      reviewNote: null,
      reviewedBy: null,
    });
    for (const node of nodes) expect(node.receivedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('shows nothing of it to a token without collections:review, collections:read:all included, nor to no token', async () => {
    const { refuse, list, reader, app } = await start();
    await refuse('S-hidden', JSON.stringify(notificationBody({ sessionId: 'S-hidden', accountNumber: '12' })));
    const kept = (await list({ first: 1 })).data!.quarantinedDeliveries.nodes[0].id as string;

    for (const [headers, code] of [
      [reader, 'UNAUTHORIZED_FIELD_OR_TYPE'],
      [{}, 'UNAUTHENTICATED'],
    ] as const) {
      const read = await list({}, headers);
      expect(read.data).toEqual({ quarantinedDeliveries: null });
      expect(read.errors?.map((error) => error.extensions?.code)).toEqual([code]);
      const reviewed = await app.query(REVIEW, { id: kept, note: 'not mine to review' }, headers);
      expect(reviewed.data).toEqual({ reviewQuarantinedDelivery: null });
      expect(reviewed.errors?.map((error) => error.extensions?.code)).toEqual([code]);
    }
    expect((await list()).data!.quarantinedDeliveries.nodes[0]).toMatchObject({ id: kept, reviewedAt: null });
  });

  it("records a review once, with the note, when and the reviewer's sub, and filters on it", async () => {
    const { app, refuse, list, operator } = await start();
    for (const sessionId of ['S-a', 'S-b']) await refuse(sessionId, JSON.stringify(notificationBody({ sessionId, accountNumber: '12' })));
    const [newest, oldest] = (await list()).data!.quarantinedDeliveries.nodes as { id: string; sessionId: string }[];
    const before = new Date().toISOString();
    const note = 'Called the bank with session S-a: a wrong account; they will resend it.';
    const { data } = await app.query(REVIEW, { id: oldest!.id, note: `  ${note}\n` }, operator);
    expect(data!.reviewQuarantinedDelivery).toMatchObject({
      id: oldest!.id,
      sessionId: 'S-a',
      reviewNote: note,
      reviewedBy: 'test-caller',
    });
    expect(data!.reviewQuarantinedDelivery.reviewedAt >= before).toBe(true);

    const again = await app.query(REVIEW, { id: oldest!.id, note: 'a second thought' }, operator);
    expect(again.data).toEqual({ reviewQuarantinedDelivery: null });
    expect(again.errors?.map((error) => [error.extensions?.code, error.message])).toEqual([
      ['BAD_USER_INPUT', expect.stringMatching(/^id: was reviewed at .*; a review is recorded once\.$/)],
    ]);

    const ids = async (variables: Record<string, unknown>) =>
      ((await list(variables)).data!.quarantinedDeliveries.nodes as { id: string }[]).map((node) => node.id);
    expect(await ids({ reviewed: true })).toEqual([oldest!.id]);
    expect(await ids({ reviewed: false })).toEqual([newest!.id]);
    expect((await list({ reviewed: true })).data!.quarantinedDeliveries.nodes[0]).toMatchObject({
      reviewNote: note,
      reviewedBy: 'test-caller',
    });
  });

  it('refuses a blank or overlong note and answers null for an unknown id, changing nothing', async () => {
    const { app, refuse, list, operator } = await start();
    await refuse('S-note', JSON.stringify(notificationBody({ sessionId: 'S-note', accountNumber: '12' })));
    const { id } = (await list()).data!.quarantinedDeliveries.nodes[0] as { id: string };
    for (const note of ['', '   \n', 'x'.repeat(2_001)]) {
      const { data, errors } = await app.query(REVIEW, { id, note }, operator);
      expect(data).toEqual({ reviewQuarantinedDelivery: null });
      expect(errors?.map((error) => [error.extensions?.code, error.extensions?.argumentName])).toEqual([['BAD_USER_INPUT', 'note']]);
    }
    for (const unknown of ['999999999', 'abc']) {
      expect(await app.query(REVIEW, { id: unknown, note: 'nothing to review' }, operator)).toEqual({
        status: 200,
        data: { reviewQuarantinedDelivery: null },
      });
    }
    expect((await list({ reviewed: false })).data!.quarantinedDeliveries.nodes).toHaveLength(1);
  });

  it('pages newest first with opaque cursors, by kind and by the time received', async () => {
    const { app, refuse, list } = await start();
    for (const sessionId of ['S-1', 'S-2', 'S-3'])
      await refuse(sessionId, JSON.stringify(notificationBody({ sessionId, accountNumber: '12' })));
    const first = notificationBody();
    await app.deliver(first);
    await refuse('S-4', JSON.stringify({ ...first, sessionId: 'S-4', currency: 'USD' }));
    const sessions = (response: Awaited<ReturnType<typeof list>>) =>
      (response.data!.quarantinedDeliveries.nodes as { sessionId: string }[]).map((node) => node.sessionId);

    const page = await list({ first: 2 });
    expect(sessions(page)).toEqual(['S-4', 'S-3']);
    expect(page.data!.quarantinedDeliveries.pageInfo.hasNextPage).toBe(true);
    const next = await list({ first: 2, after: page.data!.quarantinedDeliveries.pageInfo.endCursor });
    expect(sessions(next)).toEqual(['S-2', 'S-1']);
    expect(next.data!.quarantinedDeliveries.pageInfo.hasNextPage).toBe(false);
    expect(sessions(await list({ kind: 'CONFLICT' }))).toEqual(['S-4']);

    const all = (await list()).data!.quarantinedDeliveries.nodes as { sessionId: string; receivedAt: string }[];
    const second = all.find((node) => node.sessionId === 'S-2')!;
    expect(sessions(await list({ from: second.receivedAt }))).toEqual(['S-4', 'S-3', 'S-2']);
    expect(sessions(await list({ to: second.receivedAt }))).toEqual(['S-1']);

    for (const [variables, argument] of [
      [{ first: 101 }, 'first'],
      [{ after: 'not-a-cursor' }, 'after'],
      [{ from: '2026-11-22T10:00:00Z', to: '2026-11-22T09:00:00Z' }, 'to'],
    ] as const) {
      const refused = await list(variables);
      expect(refused.errors?.map((error) => [error.extensions?.code, error.extensions?.argumentName])).toEqual([
        ['BAD_USER_INPUT', argument],
      ]);
    }
  });

  it('gauges what awaits review from the store: the same on every replica, less once reviewed', async () => {
    const { app, issuer, database, refuse, list, operator } = await start();
    const replica = await startApp(guardedEnv(issuer, database));
    const gauges = async () => [
      await scrape(app, 'collection_quarantine_unreviewed'),
      await scrape(replica, 'collection_quarantine_unreviewed'),
    ];
    expect(await gauges()).toEqual([0, 0]);
    for (const sessionId of ['S-g1', 'S-g2']) await refuse(sessionId, JSON.stringify(notificationBody({ sessionId, accountNumber: '12' })));
    // Each scrape reads the store, reusing a count for up to a second.
    await waitFor(async () => ((await gauges()).every((count) => count === 2) ? true : undefined));
    const { id } = (await list({ first: 1 })).data!.quarantinedDeliveries.nodes[0] as { id: string };
    await replica.query(REVIEW, { id, note: 'Credited by hand.' }, operator);
    await waitFor(async () => ((await gauges()).every((count) => count === 1) ? true : undefined));
  });

  it('keeps the quarantine across a kill -9', async () => {
    const issuer = await TestIssuer.create();
    const database = await backend.create();
    const env = guardedEnv(issuer, database);
    const first = await startSubgraphProcess(env);
    const body = JSON.stringify(notificationBody({ sessionId: 'S-survivor', accountNumber: '012345678' }));
    const response = await request(`${first.baseUrl}/webhooks/collection`, { method: 'POST', headers: signedHeaders(), body });
    expect(((await response.body.json()) as { responseCode: string }).responseCode).toBe('02');
    await first.logs.first((line) => line.msg === KEPT && line.sessionId === 'S-survivor');
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await startSubgraphProcess(env);
    const token = await issuer.sign({ scope: 'collections:review', audience: TEST_AUDIENCE });
    const read = await request(`${second.baseUrl}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(token) },
      body: JSON.stringify({ query: '{ quarantinedDeliveries { nodes { kind sessionId rawBody } } }' }),
    });
    expect(((await read.body.json()) as { data: unknown }).data).toEqual({
      quarantinedDeliveries: { nodes: [{ kind: 'REJECTED', sessionId: 'S-survivor', rawBody: body }] },
    });
    expect(await scrape(second, 'collection_quarantine_unreviewed')).toBe(1);
    // Two process starts on a loaded machine: more than the default allowance, never a timing check.
  }, 60_000);
});

describe('the quarantine with authorization off (the sandbox without AUTH_JWKS_URL)', () => {
  it('is read and reviewed by anyone, the reviewer recorded as nobody', async () => {
    const { logger, logged } = captureLogs();
    const app: TestApp = await startApp({}, { logger });
    await app.deliver('{"sessionId":"S-open"');
    await logged((line) => line.msg === KEPT);
    const { id } = (await app.query(LIST)).data!.quarantinedDeliveries.nodes[0] as { id: string };
    const { data } = await app.query(REVIEW, { id, note: 'Looked at it in the sandbox.' });
    expect(data!.reviewQuarantinedDelivery).toMatchObject({ id, reviewNote: 'Looked at it in the sandbox.', reviewedBy: null });
  });
});
