/**
 * The bench's webhook floors are fair only if they are correct and store what ours stores: the bank's
 * rules and reply, exactly one 00 per settlementId however the deliveries arrive, every 00 stored, and
 * the very row ours writes for the same body, column by column. Each floor runs as the bench runs it,
 * in its own process (scripts/bench/targets.ts).
 */
import pg from 'pg';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createNotificationBodies, deliver, signedHeaders, WEBHOOK_PATH } from '../scripts/bench/bank.ts';
import { startTarget } from '../scripts/bench/targets.ts';
import { collectionNotification } from '../scripts/collection-notifier.ts';
import { startApp } from './helpers/app.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { databaseUrl, isolatedPostgresUrl, queryFile, tempSqlitePath } from './helpers/stores.ts';
import { waitFor } from './helpers/wait.ts';

type Rows = Record<string, unknown>[];

interface Floor {
  name: string;
  enabled: boolean;
  /** A new store of this kind: its STORE_URL for ours, the floor's environment, and its rows. */
  store(): Promise<{ storeUrl: string; floorEnv: Record<string, string>; rows(sql?: string): Promise<Rows> }>;
  kind: 'receiver' | 'pg-receiver';
}

const ORDERED = 'SELECT * FROM collection_notifications ORDER BY settlement_id';

const FLOORS: Floor[] = [
  {
    name: 'SQLite receiver',
    enabled: true,
    kind: 'receiver',
    async store() {
      const path = tempSqlitePath();
      return { storeUrl: `sqlite:${path}`, floorEnv: { FLOOR_SQLITE_FILE: path }, rows: async (sql = ORDERED) => queryFile(path, sql) };
    },
  },
  {
    name: 'PostgreSQL receiver',
    enabled: databaseUrl !== undefined,
    kind: 'pg-receiver',
    async store() {
      const url = await isolatedPostgresUrl(databaseUrl!);
      const rows = async (sql = ORDERED) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return (await client.query(sql)).rows;
        } finally {
          await client.end();
        }
      };
      return { storeUrl: url, floorEnv: { FLOOR_DATABASE_URL: url }, rows };
    },
  },
];

async function startFloor(floor: Floor) {
  const store = await floor.store();
  const target = await startTarget(floor.kind, floor.name, store.floorEnv);
  onCleanup(() => target.stop());
  return { target, rows: store.rows };
}

/**
 * A row without what tells two stores apart: its position, when it arrived, and what that time
 * decides; nor what our confirmer writes after the 00, once the bank has answered (the floor
 * stores the row PENDING, as ours does, and confirms nothing).
 */
function comparable(row: Record<string, unknown>): Record<string, unknown> {
  const {
    seq,
    txid,
    received_at,
    confirmation_status,
    confirmation_checked_at,
    confirmation_differences,
    acknowledged_by_bank,
    confirmation_attempts,
    confirmation_failures,
    confirmation_not_found_at,
    confirmation_due_ms,
    confirmation_due_at,
    ...rest
  } = row;
  if (rest.transaction_time === null) for (const column of ['event_ms', 'event_time']) delete rest[column];
  return rest;
}

describe.each(FLOORS)('the bench floor $name', (floor) => {
  const test = floor.enabled ? it : it.skip;

  test('answers 00 to the first delivery of a settlementId and 01 to every other, in one batch or later', async () => {
    const { target, rows } = await startFloor(floor);
    const next = createNotificationBodies();
    const [repeated, other] = [next(), next()];
    // Sent at once: most arrive in one turn and share a batch (two deliveries of one id in one statement).
    const together = await Promise.all([
      ...Array.from({ length: 8 }, () => deliver(target.baseUrl, repeated.body)),
      deliver(target.baseUrl, other.body),
    ]);
    expect(together.filter((code) => code === '00')).toHaveLength(2);
    expect(together.filter((code) => code === '01')).toHaveLength(7);
    expect(await deliver(target.baseUrl, repeated.body)).toBe('01');
    // Every 00 is in the table by the time it is answered.
    const byText = (a: string, b: string) => a.localeCompare(b);
    expect((await rows()).map((row) => String(row.settlement_id)).sort(byText)).toEqual(
      [repeated.settlementId, other.settlementId].sort(byText),
    );
  });

  test("replies in the bank's shape, and 02 to a bad signature or a body the contract refuses, storing nothing of it", async () => {
    const { target, rows } = await startFloor(floor);
    const { body } = createNotificationBodies()();
    const post = async (payload: string, headers: Record<string, string> = signedHeaders()) => {
      const response = await request(`${target.baseUrl}${WEBHOOK_PATH}`, { method: 'POST', headers, body: payload });
      return { status: response.statusCode, reply: (await response.body.json()) as Record<string, unknown> };
    };
    const sessionId = JSON.parse(body).sessionId;
    expect(await post(body, { ...signedHeaders(), 'x-auth-signature': 'AB'.repeat(64) })).toEqual({
      status: 200,
      reply: { requestSuccessful: true, sessionId, responseMessage: 'rejected transaction', responseCode: '02' },
    });
    for (const change of [
      { settlementId: '' },
      { settlementId: '9'.repeat(65) },
      { accountNumber: '12345' },
      { transactionAmount: '1e3' },
      { transactionAmount: `${'9'.repeat(19)}.00` },
      { feeAmount: '1,000' },
    ]) {
      expect((await post(JSON.stringify({ ...JSON.parse(body), ...change }))).reply, JSON.stringify(change)).toMatchObject({
        sessionId,
        responseCode: '02',
      });
    }
    expect((await post('{not json')).reply).toMatchObject({ sessionId: '', responseCode: '02' });
    expect((await post('null')).reply).toMatchObject({ responseCode: '02' });
    expect((await post(body)).reply).toEqual({ requestSuccessful: true, sessionId, responseMessage: 'success', responseCode: '00' });
    expect(await rows()).toHaveLength(1);
    // Each refused for its content was in the quarantine, as ours keeps it, before its 02 was sent.
    const kept = await rows('SELECT kind, response_code, session_id, raw_body FROM collection_quarantine ORDER BY id');
    expect(kept.map((row) => [row.kind, row.response_code, row.session_id])).toEqual([
      ...Array(6).fill(['REJECTED', '02', sessionId]),
      ['REJECTED', '02', null],
      ['REJECTED', '02', null],
    ]);
    expect(Buffer.from(kept[6]!.raw_body as Uint8Array).toString()).toBe('{not json');
  });

  test('stores the row ours stores for the same bodies, column by column', async () => {
    const { target, rows } = await startFloor(floor);
    const ours = await floor.store();
    const app = await startApp({ STORE_URL: ours.storeUrl });
    const base = (settlementId: string) => collectionNotification({ settlementId, sessionId: `S${settlementId}` });
    const bodies = [
      base('70000000000000000001'),
      // Blank, "null" and unreadable optional fields; bank time with milliseconds; amounts of every kind.
      {
        ...base('70000000000000000002'),
        currency: ' ',
        tranRemarks: 'null',
        channelId: '  7 ',
        settledAmount: ' ',
        feeAmount: '10.5',
        vatAmount: '0.001',
        tranDateTime: '2026-03-01 00:00:01.250',
      },
      {
        ...base('70000000000000000003'),
        accountNumber: ' 2233445566 ',
        transactionAmount: '123456789012.50',
        settledAmount: '99999999999999999.99',
        tranDateTime: 'yesterday',
      },
    ].map((body) => JSON.stringify(body));
    for (const body of bodies) {
      expect(await deliver(target.baseUrl, body)).toBe('00');
      expect((await app.deliver(body)).reply.responseCode).toBe('00');
    }
    const [floorRows, ourRows] = [await rows(), await ours.rows()];
    expect(Object.keys(floorRows[0]!).sort()).toEqual(Object.keys(ourRows[0]!).sort());
    expect(floorRows.map(comparable)).toEqual(ourRows.map(comparable));
    // Stored for the bank to confirm; ours has since asked the sandbox bank, which never sent them.
    expect(floorRows.map((row) => row.confirmation_status)).toEqual(['PENDING', 'PENDING', 'PENDING']);
    const ourStatuses = async () => (await ours.rows()).map((row) => row.confirmation_status);
    await waitFor(async () => ((await ourStatuses()).every((status) => status === 'NOT_AT_BANK') ? true : undefined));
  });
});
