/**
 * The bench's webhook floors are fair only if they are correct: the bank's rules and reply, exactly
 * one 00 per settlementId however the deliveries arrive, and a 00 only for what is stored. Each floor
 * runs as the bench runs it, in its own process (scripts/bench/targets.ts).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createNotificationBodies, deliver, signedHeaders, WEBHOOK_PATH } from '../scripts/bench/bank.ts';
import { isolatedSchema } from '../scripts/bench/replicas.ts';
import { startTarget, type Target } from '../scripts/bench/targets.ts';
import { onCleanup } from './helpers/cleanup.ts';
import { serviceUrl } from './helpers/services.ts';

const databaseUrl = serviceUrl('DATABASE_URL');

interface Floor {
  name: string;
  enabled: boolean;
  /** The floor's process, and the settlementIds its table holds when the test can read it. */
  start(): Promise<{ target: Target; stored?: () => Promise<string[]> }>;
}

/** The stored notification's account and amounts, as our row holds them (read back from a receiver with our row). */
interface OurColumns {
  settlement_id: string;
  account_number: string;
  transaction_amount: string;
  /** When it happened (event_time on PostgreSQL, event_ms on SQLite), from the body's tranDateTime. */
  event_time: unknown;
}

/** A receiver storing our row in SQLite under a temp dir, and what its file holds. */
async function sqliteOurRowFloor(read: (rows: OurColumns[]) => void) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-floor-test-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const target = await started(await startTarget('receiver', 'bare receiver with our row', { BENCH_DIR: dir, FLOOR_ROW: 'ours' }));
  const stored = async () => {
    const file = join(dir, readdirSync(dir).find((name) => name.startsWith('bench-receiver-'))!, 'receiver.db');
    const db = new DatabaseSync(file, { readOnly: true });
    try {
      const rows = db.prepare('SELECT settlement_id, account_number, transaction_amount, event_ms AS event_time FROM collection_notifications ORDER BY seq').all() as unknown as OurColumns[];
      read(rows);
      return rows.map((row) => row.settlement_id);
    } finally {
      db.close();
    }
  };
  return { target, stored };
}

/** A receiver storing our row in PostgreSQL, in a schema of its own, and what its table holds. */
async function postgresOurRowFloor(read: (rows: OurColumns[]) => void) {
  const schema = await isolatedSchema(databaseUrl!);
  onCleanup(() => schema.drop());
  const target = await started(
    await startTarget('pg-receiver', 'bare receiver (PostgreSQL) with our row', { FLOOR_DATABASE_URL: schema.url, FLOOR_ROW: 'ours' }),
  );
  const stored = async () => {
    const client = new pg.Client({ connectionString: schema.url });
    await client.connect();
    try {
      const { rows } = await client.query<OurColumns>('SELECT settlement_id, account_number, transaction_amount, event_time FROM collection_notifications ORDER BY seq');
      read(rows);
      return rows.map((row) => row.settlement_id);
    } finally {
      await client.end();
    }
  };
  return { target, stored };
}

/** Checks that every row read back is our row, its fields normalised from the bench's bodies. */
const ourRows = (rows: OurColumns[]) => {
  for (const row of rows) {
    expect(row.account_number).toMatch(/^\d{10}$/);
    expect(row.transaction_amount).toMatch(/^\d+(\.\d+)?$/);
    expect(row.event_time).not.toBeNull();
  }
};

async function started(target: Target): Promise<Target> {
  onCleanup(() => target.stop());
  return target;
}

const FLOORS: Floor[] = [
  {
    name: 'SQLite receiver',
    enabled: true,
    async start() {
      const dir = mkdtempSync(join(tmpdir(), 'bench-floor-test-'));
      onCleanup(() => rmSync(dir, { recursive: true, force: true }));
      return { target: await started(await startTarget('receiver', 'bare receiver', { BENCH_DIR: dir })) };
    },
  },
  {
    name: 'PostgreSQL receiver',
    enabled: databaseUrl !== undefined,
    async start() {
      const schema = await isolatedSchema(databaseUrl!);
      onCleanup(() => schema.drop());
      const target = await started(await startTarget('pg-receiver', 'bare receiver (PostgreSQL)', { FLOOR_DATABASE_URL: schema.url }));
      const stored = async () => {
        const client = new pg.Client({ connectionString: schema.url });
        await client.connect();
        try {
          return (await client.query<{ settlement_id: string }>('SELECT settlement_id FROM notifications ORDER BY position')).rows.map((r) => r.settlement_id);
        } finally {
          await client.end();
        }
      };
      return { target, stored };
    },
  },
  { name: 'SQLite receiver with our row', enabled: true, start: () => sqliteOurRowFloor(ourRows) },
  { name: 'PostgreSQL receiver with our row', enabled: databaseUrl !== undefined, start: () => postgresOurRowFloor(ourRows) },
];

describe.each(FLOORS)('the bench floor $name', (floor) => {
  const test = it.runIf(floor.enabled);

  test('answers 00 to the first delivery of a settlementId and 01 to every other, in one batch or later', async () => {
    const { target, stored } = await floor.start();
    const next = createNotificationBodies();
    const repeated = next();
    const other = next();
    // Sent at once: most arrive in one turn and share a batch (two deliveries of one id in one statement).
    const together = await Promise.all([...Array.from({ length: 8 }, () => deliver(target.baseUrl, repeated.body)), deliver(target.baseUrl, other.body)]);
    expect(together.filter((code) => code === '00')).toHaveLength(2);
    expect(together.filter((code) => code === '01')).toHaveLength(7);
    expect(await deliver(target.baseUrl, repeated.body)).toBe('01');
    // Every 00 is in the table by the time it is answered.
    if (stored) expect((await stored()).sort()).toEqual([repeated.settlementId, other.settlementId].sort());
  });

  test('replies in the bank\'s shape, and 02 to a bad signature or a body without settlementId, storing nothing', async () => {
    const { target, stored } = await floor.start();
    const { body } = createNotificationBodies()();
    const post = async (payload: string, headers: Record<string, string>) => {
      const response = await request(`${target.baseUrl}${WEBHOOK_PATH}`, { method: 'POST', headers, body: payload });
      return { status: response.statusCode, reply: (await response.body.json()) as Record<string, unknown> };
    };
    const signed = signedHeaders();
    const forged = { ...signed, 'x-auth-signature': 'AB'.repeat(64) };
    expect(await post(body, forged)).toEqual({ status: 200, reply: { requestSuccessful: true, sessionId: '', responseMessage: 'rejected transaction', responseCode: '02' } });
    const noId = JSON.stringify({ ...JSON.parse(body), settlementId: '' });
    expect((await post(noId, signed)).reply).toMatchObject({ sessionId: JSON.parse(body).sessionId, responseCode: '02' });
    expect((await post('{not json', signed)).reply).toMatchObject({ responseCode: '02' });
    expect((await post('null', signed)).reply).toMatchObject({ responseCode: '02' });
    expect((await post(body, signed)).reply).toEqual({ requestSuccessful: true, sessionId: JSON.parse(body).sessionId, responseMessage: 'success', responseCode: '00' });
    if (stored) expect(await stored()).toHaveLength(1);
  });
});
