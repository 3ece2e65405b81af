/**
 * Summaries and pages by confirmation status stay index-backed: on PostgreSQL a summary and the
 * positions of a page of a range read only their index (index-only scans, no row read), status
 * included; a page by status outside a range walks that status's own index. On SQLite the same
 * statements use the same indexes (every account's summary only its covering index).
 */
import { randomBytes } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { newNotification } from '../../test/helpers/notifications.ts';
import { databaseUrl, postgresSession, storeAt, tempSqlitePath } from '../../test/helpers/stores.ts';
import { CONFIRMATION_STATUSES, PENDING, type ConfirmationStatus } from '../domain/index.ts';
import { AFTER_EVERY_TXID, QUERIES } from './postgres-queries.ts';
import { SUMMARY_QUERIES } from './postgres-summary.ts';
import { prepareSummaryStatements } from './sqlite-summary.ts';
import type { CollectionStore } from './types.ts';

const ACCOUNTS = ['1111111111', '2222222222', '3333333333'];

/** Notifications of every status, over a few days and accounts. */
async function fill(store: CollectionStore) {
  const inserts = Array.from({ length: 300 }, (_, i) =>
    store.insert(
      newNotification({
        accountNumber: ACCOUNTS[i % ACCOUNTS.length]!,
        transactionTime: `2024-05-0${1 + (i % 3)}T${String(6 + (i % 12)).padStart(2, '0')}:00:00+01:00`,
        confirmation: { ...PENDING, status: CONFIRMATION_STATUSES[i % CONFIRMATION_STATUSES.length]! },
      }),
    ),
  );
  await Promise.all(inserts);
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Heap Fetches'?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan that reads collection_notifications (its table or an index of it). */
function scansOf(node: PlanNode): PlanNode[] {
  const own = node['Relation Name'] === 'collection_notifications' ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap(scansOf)];
}

/** A new database on `databaseUrl`'s server, dropped after the test: VACUUM's horizon there is its own sessions'. */
async function quietDatabaseUrl(databaseUrl: string): Promise<string> {
  const name = `plans_${randomBytes(6).toString('hex')}`;
  const admin = await postgresSession(databaseUrl);
  await admin.query(`CREATE DATABASE ${name}`);
  onCleanup(async () => {
    const dropper = new pg.Client({ connectionString: databaseUrl });
    await dropper.connect();
    try {
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await dropper.end();
    }
  });
  const url = new URL(databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

describe.runIf(databaseUrl !== undefined)('PostgreSQL plans by confirmation status', () => {
  it('sums from the time indexes alone, status included, and pages by status from their own indexes', async () => {
    const url = await quietDatabaseUrl(databaseUrl!);
    const store = await storeAt(url);
    await fill(store);
    await store.close();
    const client = await postgresSession(url);
    // On a database of its own, no other session's snapshot keeps VACUUM from marking every page
    // visible to all, so an index-only scan reads no row; sequential and bitmap scans off, an index
    // that can serve a read does.
    await client.query('VACUUM ANALYZE collection_notifications');
    for (const way of ['seqscan', 'bitmapscan']) await client.query(`SET enable_${way} = off`);
    const scans = async (sql: string, values: unknown[]) => {
      const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values);
      return scansOf(rows[0]!['QUERY PLAN'][0]!.Plan);
    };
    const account = { all: [], one: [ACCOUNTS[0]], several: [ACCOUNTS.slice(0, 2)] };
    const variants = [
      ['', account.all],
      ['OfAccount', account.one],
      ['OfAccounts', account.several],
    ] as const;
    const days = [
      ['2024-04-30T23:00:00Z', '2024-05-01T23:00:00Z'],
      ['2024-05-01T23:00:00Z', '2024-05-02T23:00:00Z'],
    ];

    for (const read of ['daySums', 'confirmedDaySums'] as const) {
      for (const [suffix, values] of variants) {
        const name = `${read}${suffix}` as const;
        const found = await scans(SUMMARY_QUERIES[name], [days.map((day) => day[0]), days.map((day) => day[1]), ...values]);
        // The counted and the refuted from one scan of the time index, which carries the status.
        const time = suffix === '' ? 'collection_notifications_time' : 'collection_notifications_account_time';
        expect(
          found.map((scan) => scan['Index Name']),
          name,
        ).toEqual([time]);
        for (const scan of found) expect(scan, name).toMatchObject({ 'Node Type': 'Index Only Scan', 'Heap Fetches': 0 });
      }
    }

    const refuted: ConfirmationStatus[] = ['MISMATCHED', 'NOT_AT_BANK'];
    for (const [suffix, values] of variants) {
      const name = `newestInRangeByStatus${suffix}` as keyof typeof QUERIES;
      const found = await scans(QUERIES[name], [
        '2024-05-01T00:00:00Z',
        '2024-05-03T00:00:00Z',
        AFTER_EVERY_TXID,
        0,
        21,
        refuted,
        ...values,
      ]);
      // The range's positions from the time index alone; then the page's rows by seq.
      const range = found.filter((scan) => scan['Index Name'] !== 'collection_notifications_pkey');
      expect(range, name).toEqual([expect.objectContaining({ 'Node Type': 'Index Only Scan', 'Heap Fetches': 0 })]);
      expect(
        found.every((scan) => scan['Node Type'] !== 'Seq Scan'),
        name,
      ).toBe(true);
    }
    for (const [suffix, values] of variants.slice(0, 2)) {
      const name = `newestByStatus${suffix}` as keyof typeof QUERIES;
      const found = await scans(QUERIES[name], [refuted, '-infinity', AFTER_EVERY_TXID, 0, 21, ...values]);
      const walk = suffix === '' ? 'collection_notifications_status_log' : 'collection_notifications_account_status_log';
      expect(
        found.map((scan) => scan['Index Name']),
        name,
      ).toContain(walk);
      expect(
        found.every((scan) => scan['Node Type'] !== 'Seq Scan'),
        name,
      ).toBe(true);
    }
  });
});

describe('SQLite plans by confirmation status', () => {
  it("sums every account's range from its covering index, status included, and pages by status from their own indexes", async () => {
    const path = tempSqlitePath();
    const store = await storeAt(`sqlite:${path}`);
    await fill(store);
    await store.close();
    const database = new DatabaseSync(path);
    try {
      const statements = prepareSummaryStatements(database);
      const rows = (sql: string) => database.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { id: number; parent: number; detail: string }[];
      const plan = (sql: string) =>
        rows(sql)
          .map((row) => row.detail)
          .join('\n');
      for (const counting of ['unrefuted', 'confirmed'] as const) {
        expect(plan(statements.daySums[counting].all.sourceSQL), counting).toMatch(/USING COVERING INDEX collection_notifications_time \(/);
        expect(plan(statements.daySums[counting].one.sourceSQL), counting).toMatch(/USING INDEX collection_notifications_account_time \(/);
      }
      expect(plan(statements.refuted.all.sourceSQL)).toMatch(/USING COVERING INDEX collection_notifications_refuted_time \(/);
      expect(plan(statements.refuted.one.sourceSQL)).toMatch(/USING COVERING INDEX collection_notifications_account_refuted_time \(/);
      expect(plan(statements.newestInRangeByStatus.all.sourceSQL)).toMatch(/USING COVERING INDEX collection_notifications_time \(/);
      expect(plan(statements.newestInRangeByStatus.one.sourceSQL)).toMatch(/USING COVERING INDEX collection_notifications_account_time \(/);
      for (const [kind, index] of [
        ['all', 'collection_notifications_status_seq'],
        ['one', 'collection_notifications_account_status_seq'],
      ] as const) {
        // Each status walks its index in seq order (no sort of its own), from the index alone.
        const steps = rows(statements.newestByStatus[kind].sourceSQL);
        const walks = steps.filter((step) => step.detail.startsWith(`SEARCH collection_notifications USING COVERING INDEX ${index} (`));
        expect(walks, kind).toHaveLength(CONFIRMATION_STATUSES.length);
        for (const walk of walks) {
          expect(
            steps.filter((step) => step.parent === walk.parent && step.detail.includes('TEMP B-TREE')),
            kind,
          ).toEqual([]);
        }
      }
      for (const sql of [statements.newestByStatus.several.sourceSQL, statements.newestInRangeByStatus.several.sourceSQL]) {
        expect(plan(sql)).not.toMatch(/SCAN collection_notifications(?! USING)/);
      }
    } finally {
      database.close();
    }
  });
});
