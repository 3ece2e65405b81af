// The PostgreSQL store's quarantine: kept and counted on a connection of its own, so it never takes
// one the webhook's writes need; listed and reviewed on the GraphQL reads' connections.
import type { RunQuery } from './postgres-deadline.ts';
import {
  QUARANTINE_COLUMNS,
  quarantineId,
  quarantinePage,
  quarantineParams,
  quarantineWithIds,
  storableText,
  toQuarantineRecord,
  type QuarantineRow,
} from './quarantine-row.ts';
import type { KeepOutcome, QuarantineStore } from './types.ts';

// Each id list one text[] parameter, unnested: each id found through its own index entries.
const WITH_IDS = quarantineWithIds(
  (n) => `$${n}`,
  (n) => `(SELECT unnest($${n}::text[]))`,
);

/** The quarantine over `runners`: `quarantine` for its writes and count, `read` for pages, reviews and reads by a transfer's ids. */
export function createPostgresQuarantine(runners: { quarantine: RunQuery; read: RunQuery }): QuarantineStore {
  const byId = async (run: RunQuery, text: string, values: unknown[]) => (await run<QuarantineRow>({ text, values })).rows[0];
  return {
    async keep(deliveries, { maxRows, maxBytes }) {
      // One jsonb parameter, as the notifications' insert takes its batch; the bytes in base64, then their size.
      const rows = deliveries.map((delivery) => [
        ...quarantineParams(delivery).map((value) =>
          value instanceof Uint8Array ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') : value,
        ),
        delivery.rawBody.byteLength,
      ]);
      const {
        rows: [result],
      } = await runners.quarantine<{ outcomes: KeepOutcome[] }>({
        name: 'quarantine-keep',
        text: 'SELECT collection_quarantine_keep($1::jsonb, $2, $3) AS outcomes',
        values: [JSON.stringify(rows), maxRows, maxBytes],
      });
      if (result?.outcomes.length !== deliveries.length)
        throw new Error('collection_quarantine_keep answered for another number of deliveries');
      return result.outcomes;
    },
    async list(query) {
      const { text, values } = quarantinePage(query, (n) => `$${n}`);
      return (await runners.read<QuarantineRow>({ text, values })).rows.map(toQuarantineRecord);
    },
    async review({ id, note, reviewedBy, reviewedAt }) {
      const number = quarantineId(id);
      if (number === undefined) return { status: 'unknown' };
      const reviewed = await byId(
        runners.read,
        `UPDATE collection_quarantine SET reviewed_at = $1, review_note = $2, reviewed_by = $3 WHERE id = $4 AND reviewed_at IS NULL RETURNING ${QUARANTINE_COLUMNS}`,
        [reviewedAt, storableText(note), storableText(reviewedBy), number],
      );
      if (reviewed) return { status: 'reviewed', delivery: toQuarantineRecord(reviewed) };
      const found = await byId(runners.read, `SELECT ${QUARANTINE_COLUMNS} FROM collection_quarantine WHERE id = $1`, [number]);
      return found ? { status: 'already-reviewed', delivery: toQuarantineRecord(found) } : { status: 'unknown' };
    },
    async withTransferIds({ settlementIds, sessionIds, limit }) {
      const { rows } = await runners.read<QuarantineRow>({
        name: 'quarantine-with-ids',
        text: WITH_IDS,
        values: [settlementIds, sessionIds, limit],
      });
      return rows.map(toQuarantineRecord);
    },
    async countUnreviewed() {
      const {
        rows: [row],
      } = await runners.quarantine<{ n: string }>({
        name: 'quarantine-unreviewed',
        text: 'SELECT unreviewed AS n FROM collection_quarantine_backlog',
      });
      return Number(row?.n ?? 0);
    },
  };
}
