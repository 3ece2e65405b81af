// The receivers' other row (`npm run bench -- --floor-row ours`): instead of their three columns, the
// row our store writes, into our schema with its indexes, each body parsed and normalised as our
// webhook does. Everything else stays the receiver's own (its route, its batch per turn, its reply),
// so ours against this floor is what our code costs beyond storing the row the contract needs, and
// this floor against the usual one is what that row costs (docs/benchmarks.md).
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { parseNotification } from '../../../src/collection/notification.ts';
import type { NewCollectionNotification } from '../../../src/domain/index.ts';
import { createLogger } from '../../../src/logger.ts';
import { toInsertParams } from '../../../src/store/notification-row.ts';
import { migrate } from '../../../src/store/postgres-migrate.ts';
import { QUERIES } from '../../../src/store/postgres-queries.ts';
import { configureConnection, prepareInsert } from '../../../src/store/sqlite-connection.ts';
import { pushSummaryValues } from '../../../src/store/sqlite-summary.ts';
import { openSqliteStore } from '../../../src/store/sqlite.ts';

/** Which row the receivers store: `FLOOR_ROW=ours` (set by the bench's `--floor-row ours`) or their own. */
export const STORES_OUR_ROW = process.env.FLOOR_ROW === 'ours';

const silent = createLogger('silent');

/** What the receivers hand over of a delivery: the body as sent, and its JSON object, parsed once. */
interface ParsedDelivery {
  body: string;
  sessionId: string;
  fields: Record<string, unknown>;
}

/** A body as our webhook stores it: the bank's time zone our default (Africa/Lagos), received now. */
function normalised({ body, sessionId, fields }: ParsedDelivery): NewCollectionNotification {
  // Given the receiver's own parse, as ours parses each body once too.
  const parsed = parseNotification({ raw: body, fields, sessionId }, { timezone: 'Africa/Lagos', receivedAt: new Date() });
  // The bench sends only valid bodies; the floors' own check has already read the settlementId.
  if (!parsed.ok) throw new Error(`a bench body our webhook would refuse: ${parsed.reason}`);
  return parsed.notification;
}

/** SQLite: our schema made by our migrations at `path`, and our prepared insert of one body's row. */
export async function sqliteOurRow(path: string) {
  // Our store migrates the file and closes it; the receiver then writes it on a connection of its own.
  await (await openSqliteStore(path, { logger: silent })).close();
  const db = new DatabaseSync(path);
  configureConnection(db);
  const statement = prepareInsert(db);
  return {
    db,
    insert(delivery: ParsedDelivery) {
      const notification = normalised(delivery);
      return statement.run(...(pushSummaryValues(toInsertParams(notification), notification) as SQLInputValue[]));
    },
  };
}

/** PostgreSQL: our schema made by our migrations at `url`, and our batch statement with its one parameter. */
export async function postgresOurRow(url: string) {
  await migrate(url, {}, silent);
  // Our insert's parameter, as store/postgres.ts builds it: the rows as a JSON array in settlementId
  // order (its repair of lone surrogates left out: the bench's bodies have none).
  return {
    text: QUERIES.insert,
    values: (batch: readonly ParsedDelivery[]) => {
      const rows = batch.map(normalised).sort((a, b) => (a.settlementId < b.settlementId ? -1 : a.settlementId > b.settlementId ? 1 : 0));
      return [JSON.stringify(rows.map(toInsertParams))];
    },
  };
}
