/**
 * The bench's webhook floors are fair only if they are correct: the bank's rules and reply, exactly
 * one 00 per settlementId however the deliveries arrive, and a 00 only for what is stored. Each floor
 * runs as the bench runs it, in its own process (scripts/bench/targets.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
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
    expect((await post(body, signed)).reply).toEqual({ requestSuccessful: true, sessionId: JSON.parse(body).sessionId, responseMessage: 'success', responseCode: '00' });
    if (stored) expect(await stored()).toHaveLength(1);
  });
});
