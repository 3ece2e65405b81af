// The webhook floors' row: the table our migrations make (whatever migrations the store's folder
// holds, applied in order), filled by the floor's own code, never the store's: its own JSON parse,
// the bank's rules for what is refused, and the same normalised fields ours stores. Each receiver
// adds the columns its database sums (floors/receiver.ts, floors/pg-receiver.ts).
// test/bench-floors.test.ts checks the row, column by column, against what ours stores.
import { loadMigrations } from '../../../src/store/migrations.ts';

/** The notification's columns as received, in the order `values` gives them. */
export const COLUMNS = [
  'settlement_id',
  'session_id',
  'account_number',
  'transaction_amount',
  'settled_amount',
  'fee_amount',
  'vat_amount',
  'currency',
  'narration',
  'initiation_tran_ref',
  'source_account_number',
  'source_account_name',
  'source_bank_name',
  'channel_id',
  'transaction_time',
  'received_at',
  'raw_body',
  'confirmation_status',
] as const;

/** A delivery that passed the checks: its columns, `received_at` still to come (the batch's time). */
export interface FloorRow {
  settlementId: string;
  sessionId: string;
  accountNumber: string;
  transactionAmount: string;
  /** settled, fee and VAT amounts. */
  amounts: [string | null, string | null, string | null];
  /** currency, narration … channel id, in COLUMNS order. */
  texts: (string | null)[];
  transactionTime: string | null;
  rawBody: string;
}

const PLAIN_DECIMAL = /^\d{1,18}(\.\d+)?$/;
const BANK_TIME = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d{3})?)$/;
const TEXT_FIELDS = [
  'currency',
  'tranRemarks',
  'initiationTranRef',
  'sourceAccountNumber',
  'sourceAccountName',
  'sourceBankName',
  'channelId',
];

/** Trimmed text, or null when absent, blank or the text "null". */
function text(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' || trimmed.toLowerCase() === 'null' ? null : trimmed;
}

/** An optional amount as kept: null when left out (readDelivery refused any other). */
const amount = (value: unknown) => (typeof value === 'string' && PLAIN_DECIMAL.test(value) ? value : null);

/** A body refused for its content: the sessionId its 02 echoes, and what its quarantine row holds. */
export interface FloorRefusal {
  sessionId: string;
  reason: string;
  /** sessionId, settlementId and accountNumber as the row keeps them: text, else null. */
  ids: [string | null, string | null, string | null];
}

/** The quarantine's columns a refusal fills, in the order `refusalValues` gives them. */
export const QUARANTINE_COLUMNS = [
  'kind',
  'reason',
  'detail',
  'response_code',
  'received_at',
  'session_id',
  'settlement_id',
  'account_number',
  'raw_body',
] as const;

/** A refusal's values in QUARANTINE_COLUMNS order, the body as sent. */
export function refusalValues(refusal: FloorRefusal, receivedAt: string, body: Uint8Array): (string | null | Uint8Array)[] {
  return ['REJECTED', refusal.reason, null, '02', receivedAt, ...refusal.ids, body];
}

/**
 * Reads one body: the row, or its refusal (not a JSON object, or an account, settlementId or amount
 * the contract refuses). The bank's time is read in its usual form, in West Africa Time (UTC+1 all
 * year), as ours writes it; the bench sends no other form.
 */
export function readDelivery(body: string): { row: FloorRow } | { refused: FloorRefusal } {
  let fields: Record<string, unknown>;
  const notJson = { refused: { sessionId: '', reason: 'body_not_json_object', ids: [null, null, null] } } satisfies {
    refused: FloorRefusal;
  };
  try {
    fields = JSON.parse(body);
  } catch {
    return notJson;
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return notJson;
  const sessionId = typeof fields.sessionId === 'string' ? fields.sessionId : '';
  const accountNumber = text(fields.accountNumber);
  const settlementId = text(fields.settlementId);
  const transactionAmount = fields.transactionAmount;
  const refused = (reason: string) => ({
    refused: { sessionId, reason, ids: [text(sessionId), settlementId, accountNumber] as FloorRefusal['ids'] },
  });
  if (!accountNumber || !/^\d{10}$/.test(accountNumber)) return refused('invalid_account_number');
  if (!settlementId || settlementId.length > 64) return refused('invalid_settlement_id');
  if (typeof transactionAmount !== 'string' || !PLAIN_DECIMAL.test(transactionAmount)) return refused('invalid_transaction_amount');
  // An optional amount may be left out (absent, null, blank, "null"); one given must be plain.
  const given = [fields.settledAmount, fields.feeAmount, fields.vatAmount].filter((value) => value !== undefined && value !== null);
  if (given.some((value) => typeof value !== 'string' || (text(value) !== null && !PLAIN_DECIMAL.test(value))))
    return refused('invalid_amount');
  const time = BANK_TIME.exec(text(fields.tranDateTime) ?? '');
  return {
    row: {
      settlementId,
      sessionId,
      accountNumber,
      transactionAmount,
      amounts: [amount(fields.settledAmount), amount(fields.feeAmount), amount(fields.vatAmount)],
      texts: TEXT_FIELDS.map((name) => text(fields[name])),
      transactionTime: time ? `${time[1]}T${time[2]}+01:00` : null,
      rawBody: body,
    },
  };
}

/** The row's values in COLUMNS order: stored PENDING, for the bank to confirm, as ours stores it with confirmation on. */
export function values(row: FloorRow, receivedAt: string): (string | null)[] {
  return [
    row.settlementId,
    row.sessionId,
    row.accountNumber,
    row.transactionAmount,
    ...row.amounts,
    ...row.texts,
    row.transactionTime,
    receivedAt,
    row.rawBody,
    'PENDING',
  ];
}

/** The SQL of every migration of `kind`, in order: the floor's schema is ours. */
export async function migrationsOf(kind: 'sqlite' | 'postgres'): Promise<string[]> {
  return (await loadMigrations(kind)).map((migration) => migration.sql);
}
