/**
 * The archiving procedure of docs/operations.md, run as written against a live app on each store:
 * the oldest notifications leave the live table (into the archive), and cursors of archived
 * notifications still page and resume. The statements here are the document's, word for word.
 */
import { readFileSync } from 'node:fs';
import type { Client, ExecutionResult } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import { notificationBody, startApp, untilListed, type TestApp } from './helpers/app.ts';
import { captureLogs } from './helpers/logs.ts';
import { queryFile, tempDirectory, urlStoreBackends, type UrlTestDatabase } from './helpers/stores.ts';
import { nextTurn } from './helpers/wait.ts';

const DOC = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
const DOC_CUTOFF = '2025-06-01T00:00:00.000Z';

const POSTGRES_ARCHIVE_TABLE =
  'CREATE TABLE IF NOT EXISTS collection_notifications_archive (LIKE collection_notifications INCLUDING INDEXES);';
const POSTGRES_MOVE = `WITH first_kept AS (
  SELECT seq FROM collection_notifications
  WHERE received_at >= '${DOC_CUTOFF}' ORDER BY seq LIMIT 1
), moved AS (
  DELETE FROM collection_notifications
  WHERE seq IN (SELECT seq FROM collection_notifications WHERE seq < (SELECT seq FROM first_kept) ORDER BY seq LIMIT 10000)
  RETURNING *
)
INSERT INTO collection_notifications_archive SELECT * FROM moved;`;
const SQLITE_DELETE = `DELETE FROM collection_notifications WHERE seq IN (
  SELECT seq FROM collection_notifications
  WHERE seq < (SELECT seq FROM collection_notifications WHERE received_at >= '${DOC_CUTOFF}' ORDER BY seq LIMIT 1)
  ORDER BY seq LIMIT 10000);`;

const POSTGRES_QUARANTINE_ARCHIVE_TABLE =
  'CREATE TABLE IF NOT EXISTS collection_quarantine_archive (LIKE collection_quarantine INCLUDING INDEXES);';
const POSTGRES_QUARANTINE_MOVE = `WITH moved AS (
  DELETE FROM collection_quarantine
  WHERE id IN (SELECT id FROM collection_quarantine WHERE reviewed_at < '${DOC_CUTOFF}' ORDER BY id LIMIT 10000)
  RETURNING *
)
INSERT INTO collection_quarantine_archive SELECT * FROM moved;`;
const SQLITE_QUARANTINE_DELETE = `DELETE FROM collection_quarantine WHERE id IN (
  SELECT id FROM collection_quarantine WHERE reviewed_at < '${DOC_CUTOFF}' ORDER BY id LIMIT 10000);`;

/** Runs the document's procedure for the quarantine with `cutoff`; returns the session ids of the archived rows. */
async function archiveQuarantine(database: UrlTestDatabase, cutoff: string): Promise<unknown[]> {
  const at = (sql: string) => sql.replaceAll(DOC_CUTOFF, cutoff);
  if (database.storeUrl.startsWith('postgres')) {
    await database.query(POSTGRES_QUARANTINE_ARCHIVE_TABLE);
    await database.query(at(POSTGRES_QUARANTINE_MOVE));
    await database.query(at(POSTGRES_QUARANTINE_MOVE));
    return (await database.query('SELECT session_id FROM collection_quarantine_archive ORDER BY id')).map((row) => row.session_id);
  }
  const copy = `${tempDirectory()}/collections-archive.db`;
  await database.query(`VACUUM INTO '${copy}'`);
  await database.query(at(SQLITE_QUARANTINE_DELETE));
  await database.query(at(SQLITE_QUARANTINE_DELETE));
  const kept = new Set((await database.query('SELECT id FROM collection_quarantine')).map((row) => row.id));
  return queryFile(copy, 'SELECT id, session_id FROM collection_quarantine ORDER BY id')
    .filter((row) => !kept.has(row.id))
    .map((row) => row.session_id);
}

/** Runs the document's procedure for `cutoff` beside the running app; returns the archived rows. */
async function archive(database: UrlTestDatabase, cutoff: string): Promise<Record<string, unknown>[]> {
  const at = (sql: string) => sql.replaceAll(DOC_CUTOFF, cutoff);
  if (database.storeUrl.startsWith('postgres')) {
    await database.query(POSTGRES_ARCHIVE_TABLE);
    // Until it moves nothing: the first run moves everything here (fewer than 10,000).
    await database.query(at(POSTGRES_MOVE));
    await database.query(at(POSTGRES_MOVE));
    return database.query('SELECT * FROM collection_notifications_archive ORDER BY seq');
  }
  const copy = `${tempDirectory()}/collections-archive.db`;
  await database.query(`VACUUM INTO '${copy}'`);
  await database.query(at(SQLITE_DELETE));
  await database.query(at(SQLITE_DELETE));
  // What the copy holds and the live file no longer does: the archived rows.
  const kept = new Set((await database.query('SELECT seq FROM collection_notifications')).map((row) => row.seq));
  return queryFile(copy, 'SELECT * FROM collection_notifications ORDER BY seq').filter((row) => !kept.has(row.seq));
}

const SUBSCRIPTION = 'subscription($after: String) { incomingTransfer(after: $after) { settlementId } }';

/** The settlementIds a subscription receives; `next(n)` resolves once n have come. */
function subscribe(client: Client, after: string) {
  const ids: string[] = [];
  const errors: unknown[] = [];
  let waiter: { count: number; resolve: () => void } | undefined;
  client.subscribe<{ incomingTransfer: { settlementId: string } }>(
    { query: SUBSCRIPTION, variables: { after } },
    {
      next: (result: ExecutionResult<{ incomingTransfer: { settlementId: string } }>) => {
        if (result.errors) errors.push(...result.errors);
        if (result.data) ids.push(result.data.incomingTransfer.settlementId);
        if (waiter && ids.length >= waiter.count) waiter.resolve();
      },
      error: (error) => errors.push(error),
      complete: () => errors.push('completed'),
    },
  );
  return {
    ids,
    errors,
    next: (count: number) => new Promise<void>((resolve) => (ids.length >= count ? resolve() : (waiter = { count, resolve }))),
  };
}

/** Six notifications, the first three received before the cutoff; their settlementIds and cursors. */
async function sixAroundACutoff(app: TestApp) {
  const bodies = Array.from({ length: 6 }, () => notificationBody());
  for (const body of bodies.slice(0, 3)) expect((await app.deliver(body)).reply.responseCode).toBe('00');
  // receivedAt counts milliseconds: the cutoff is the first one after the third was received.
  const third = Date.now();
  while (Date.now() === third) await nextTurn();
  const cutoff = new Date().toISOString();
  for (const body of bodies.slice(3)) expect((await app.deliver(body)).reply.responseCode).toBe('00');
  await untilListed(app, bodies.at(-1)!.settlementId);
  const ids = bodies.map((body) => String(body.settlementId));
  const cursors: string[] = [];
  for (const id of ids)
    cursors.push((await app.query(`{ collectionNotification(settlementId: "${id}") { cursor } }`)).data!.collectionNotification.cursor);
  return { ids, cursors, cutoff };
}

describe('the archiving procedure of docs/operations.md', () => {
  it("is the document's, word for word", () => {
    for (const statement of [
      POSTGRES_ARCHIVE_TABLE,
      POSTGRES_MOVE,
      SQLITE_DELETE,
      POSTGRES_QUARANTINE_ARCHIVE_TABLE,
      POSTGRES_QUARANTINE_MOVE,
      SQLITE_QUARANTINE_DELETE,
    ]) {
      expect(DOC).toContain(statement);
    }
  });

  describe.each(urlStoreBackends)('on $name', (backend) => {
    const test = backend.enabled ? it : it.skip;

    test('moves the notifications older than the cutoff out; cursors of archived ones still page and resume', async () => {
      const database = await backend.create();
      const app = await startApp({ STORE_URL: database.storeUrl });
      const { ids, cursors, cutoff } = await sixAroundACutoff(app);

      const archived = await archive(database, cutoff);
      expect(archived.map((row) => row.settlement_id)).toEqual(ids.slice(0, 3));
      const page = async (after?: string) => {
        const reply = await app.query(
          `query($after: String) { collectionNotifications(first: 20, after: $after) { nodes { settlementId } pageInfo { hasNextPage } } }`,
          { after },
        );
        expect(reply.errors).toBeUndefined();
        return reply.data!.collectionNotifications;
      };
      expect((await page()).nodes.map((n: { settlementId: string }) => n.settlementId)).toEqual(ids.slice(3).reverse());
      // After a kept notification: the older ones still stored. After an archived one: nothing older is left.
      expect((await page(cursors[4])).nodes.map((n: { settlementId: string }) => n.settlementId)).toEqual([ids[3]]);
      expect(await page(cursors[1])).toEqual({ nodes: [], pageInfo: { hasNextPage: false } });
      expect((await app.query(`{ collectionNotification(settlementId: "${ids[0]}") { settlementId } }`)).data).toEqual({
        collectionNotification: null,
      });

      // Resuming after an archived notification replays every stored one after it, then goes on live.
      const resumed = subscribe(app.wsClient(), cursors[1]!);
      await resumed.next(3);
      const live = notificationBody();
      expect((await app.deliver(live)).reply.responseCode).toBe('00');
      await resumed.next(4);
      expect(resumed.ids).toEqual([...ids.slice(3), live.settlementId]);
      expect(resumed.errors).toEqual([]);
    });

    test('moves out of the quarantine the deliveries reviewed before the cutoff, never one awaiting review', async () => {
      const database = await backend.create();
      const { logger, logged } = captureLogs();
      const app = await startApp({ STORE_URL: database.storeUrl }, { logger });
      const refuse = async (sessionId: string) => {
        expect((await app.deliver(notificationBody({ sessionId, accountNumber: '12' }))).reply.responseCode).toBe('02');
        await logged((line) => line.msg === 'collection notification kept in the quarantine' && line.sessionId === sessionId);
      };
      for (const sessionId of ['S-1', 'S-2', 'S-3']) await refuse(sessionId);
      const listed = async () =>
        (await app.query('{ quarantinedDeliveries { nodes { id sessionId reviewedAt } } }')).data!.quarantinedDeliveries.nodes as {
          id: string;
          sessionId: string;
        }[];
      const [third, second, first] = await listed();
      for (const delivery of [first!, second!]) {
        await app.query('mutation($id: ID!) { reviewQuarantinedDelivery(id: $id, note: "Credited by hand.") { id } }', { id: delivery.id });
      }
      const reviewed = Date.now();
      while (Date.now() === reviewed) await nextTurn();
      const cutoff = new Date().toISOString();
      await refuse('S-4');
      const fourth = (await listed())[0]!;
      await app.query('mutation($id: ID!) { reviewQuarantinedDelivery(id: $id, note: "Raised with the bank.") { id } }', { id: fourth.id });

      expect(await archiveQuarantine(database, cutoff)).toEqual(['S-1', 'S-2']);
      expect((await listed()).map((delivery) => delivery.sessionId)).toEqual(['S-4', 'S-3']);
      expect(third!.sessionId).toBe('S-3');
      // Ids are never given again: the next delivery comes after every one, archived or not.
      await refuse('S-5');
      expect(Number((await listed())[0]!.id)).toBeGreaterThan(Number(fourth.id));
    });

    test('stores a delivery of an archived settlementId again once no replica remembers it: why only notifications past any retry are archived', async () => {
      const database = await backend.create();
      const app = await startApp({ STORE_URL: database.storeUrl });
      const { ids, cutoff } = await sixAroundACutoff(app);
      await archive(database, cutoff);
      // The replica that stored it still remembers it: 01, as before the archiving.
      expect((await app.deliver({ ...notificationBody(), settlementId: ids[0] })).reply.responseCode).toBe('01');
      // A replica started since knows only the live table.
      const restarted = await startApp({ STORE_URL: database.storeUrl });
      expect((await restarted.deliver({ ...notificationBody(), settlementId: ids[1] })).reply.responseCode).toBe('00');
      expect((await restarted.deliver({ ...notificationBody(), settlementId: ids[3] })).reply.responseCode).toBe('01');
    });
  });
});
