/**
 * What the sandbox bank's collection service writes: a transfer made on its console, op 14's body
 * for it, and ops 15/16's answers about it, amounts written as the bank's samples write them.
 */
import { randomInt } from 'node:crypto';
import { DateTime } from 'luxon';
import { stringField, type Fields } from './http.ts';

/** A transfer the bank has made and notified (or tried to). */
export interface SentTransfer {
  /** Op 14's body as fields, amounts as decimal text. */
  fields: Record<string, string>;
  /** Op 14's body exactly as sent, every delivery alike. */
  body: string;
  sourceBankCode: string;
  settlementDateTime: string;
  /** The webhook answered `00` to a delivery of it. */
  acknowledged: boolean;
}

/** The `tranRemarks` of the bank's "not known" answer. */
const NOT_FOUND_REMARKS = 'Transaction not found!!!';
const ACCOUNT_NUMBER = /^\d{10}$/;
/** What the console takes as an amount: naira and at most kobo, as a bank's form would. */
const CONSOLE_AMOUNT = /^\d{1,18}(?:\.\d{1,2})?$/;
/** The payer every console transfer comes from (a demo account at GTBank). */
const PAYER = {
  sourceAccountNumber: '0011223344',
  sourceAccountName: 'CHUKWUEMEKA OBI',
  sourceBankCode: '000013',
  sourceBankName: 'GTBank',
};

/** `JSON.rawJSON` (Node 24), which TypeScript's lib does not know yet: a number written as given. */
const rawJSON = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

export interface TransferOrder {
  accountNumber: string;
  amount: string;
  narration: string;
  settledAmount: string;
  feeAmount: string;
  vatAmount: string;
  lost: boolean;
}

/** The console's form: a transfer to `accountNumber` of `amount`; an error naming the field when it is wrong. */
export function readTransferOrder(fields: Fields | null): TransferOrder | string {
  if (fields === null) return 'the body must be a JSON object';
  const accountNumber = stringField(fields, 'accountNumber');
  if (accountNumber === undefined || !ACCOUNT_NUMBER.test(accountNumber)) return 'accountNumber must be 10 digits';
  const amounts: Record<string, string> = {};
  for (const name of ['amount', 'settledAmount', 'feeAmount', 'vatAmount']) {
    const value = fields[name];
    if (value === undefined && name !== 'amount') continue;
    if (typeof value !== 'string' || !CONSOLE_AMOUNT.test(value)) return `${name} must be a decimal string such as "1500.00"`;
    amounts[name] = value;
  }
  const narration = fields.narration ?? 'Transfer';
  if (typeof narration !== 'string') return 'narration must be a string';
  if (fields.lost !== undefined && typeof fields.lost !== 'boolean') return 'lost must be true or false';
  const amount = amounts.amount!;
  return {
    accountNumber,
    amount,
    narration,
    settledAmount: amounts.settledAmount ?? amount,
    feeAmount: amounts.feeAmount ?? '0.00',
    vatAmount: amounts.vatAmount ?? '0.00',
    lost: fields.lost === true,
  };
}

/** A transfer as the bank makes it: fresh NIP ids, now in the bank's zone, op 14's body. */
export function newTransfer(order: TransferOrder, now: number, timezone: string): SentTransfer {
  const at = DateTime.fromMillis(now, { zone: timezone });
  // A NIP session id: the sending bank's code, the time as yyMMddHHmmss, twelve random digits.
  const sessionId = `${PAYER.sourceBankCode}${at.toFormat('yyMMddHHmmss')}${digits(12)}`;
  const settlementId = `${at.toFormat('yyyyMMddHHmmss')}${digits(10)}`;
  // Op 14's fields, in the order the bank's guide lists them; amounts as text, as op 14 sends them.
  const fields = {
    sessionId,
    accountNumber: order.accountNumber,
    tranRemarks: order.narration,
    transactionAmount: order.amount,
    settledAmount: order.settledAmount,
    feeAmount: order.feeAmount,
    vatAmount: order.vatAmount,
    currency: 'NGN',
    initiationTranRef: '',
    settlementId,
    sourceAccountNumber: PAYER.sourceAccountNumber,
    sourceAccountName: PAYER.sourceAccountName,
    sourceBankName: PAYER.sourceBankName,
    channelId: '1',
    tranDateTime: at.toFormat('yyyy-MM-dd HH:mm:ss'),
  };
  return {
    fields,
    body: JSON.stringify(fields),
    sourceBankCode: PAYER.sourceBankCode,
    settlementDateTime: at.toFormat('M/d/yyyy h:mm:ss a', { locale: 'en-US' }),
    acknowledged: false,
  };
}

/**
 * Ops 15/16's answer for a transfer the bank holds: op 14's fields plus the bank's own, amounts as
 * JSON numbers written from their decimal text (`1500.00` as `1500.0`), so no float ever rounds
 * them, as large as they come.
 */
export function verifyAnswer({ fields, sourceBankCode, settlementDateTime, acknowledged }: SentTransfer): Record<string, unknown> {
  const whole = BigInt(fields.transactionAmount!.split('.')[0]!);
  return {
    sessionId: fields.sessionId,
    settlementId: fields.settlementId,
    initiationTranRef: fields.initiationTranRef,
    accountNumber: fields.accountNumber,
    tranRemarks: fields.tranRemarks,
    transactionAmount: bankNumber(fields.transactionAmount!),
    settledAmount: bankNumber(fields.settledAmount!),
    feeAmount: bankNumber(fields.feeAmount!),
    vatAmount: bankNumber(fields.vatAmount!),
    currency: fields.currency,
    sourceAccountNumber: fields.sourceAccountNumber,
    sourceAccountName: fields.sourceAccountName,
    sourceBankCode,
    sourceBankName: fields.sourceBankName,
    channelId: fields.channelId,
    tranDateTime: fields.tranDateTime,
    settlementDateTime,
    // Stamp duty applies to transfers of ₦10,000 and more.
    stamp_duty_flg: whole >= 10_000n ? 1 : 0,
    post_flg: 1,
    notification_acknowledgement: acknowledged ? 1 : 0,
  };
}

/** The bank's "not known": HTTP 200, empty ids and strings, every amount `0.0`. */
export function notFound(): Record<string, unknown> {
  const zero = bankNumber('0');
  return {
    sessionId: '',
    settlementId: '',
    initiationTranRef: '',
    accountNumber: '',
    tranRemarks: NOT_FOUND_REMARKS,
    transactionAmount: zero,
    settledAmount: zero,
    feeAmount: zero,
    vatAmount: zero,
    currency: '',
    sourceAccountNumber: '',
    sourceAccountName: '',
    sourceBankCode: '',
    sourceBankName: '',
    channelId: '',
    tranDateTime: '',
    settlementDateTime: '',
    stamp_duty_flg: 0,
    post_flg: 0,
    notification_acknowledgement: 0,
  };
}

/**
 * A decimal string as the bank's samples write a JSON number (`1000.0`, `955.0`, `0.0`): no leading
 * or trailing zeros, one decimal kept; the digits written as they are, never through a float.
 */
function bankNumber(decimal: string): unknown {
  const [whole = '0', fraction = ''] = decimal.split('.');
  return rawJSON(`${whole.replace(/^0+(?=\d)/, '')}.${fraction.replace(/0+$/, '') || '0'}`);
}

function digits(count: number): string {
  let text = '';
  while (text.length < count) text += String(randomInt(0, 1_000_000)).padStart(6, '0');
  return text.slice(0, count);
}
