/**
 * What the fake collection bank (./fake-collection-bank.ts) writes: ops 15/16's answers, written by
 * hand so no float ever holds an amount and each of the bank's ways of writing one can be chosen,
 * and op 14's body for a queued op 17.
 */

/** A transfer as the bank holds it, in the bank's names. Amounts are decimal text. */
export interface FakeTransfer {
  sessionId: string;
  settlementId: string;
  accountNumber: string;
  transactionAmount: string;
  settledAmount?: string;
  feeAmount?: string;
  vatAmount?: string;
  currency?: string;
  tranRemarks?: string;
  initiationTranRef?: string;
  sourceAccountNumber?: string;
  sourceAccountName?: string;
  sourceBankCode?: string;
  sourceBankName?: string;
  channelId?: string;
  tranDateTime?: string;
  settlementDateTime?: string;
  /** 1 when the bank holds the partner's `00`. Default 1; written with JSON.stringify (`rawJson` for `1.0`). */
  notification_acknowledgement?: number | string | boolean;
  /**
   * How the amounts are written: `numbers` (default, as the bank's samples: the text as a JSON number,
   * never through a float, so `1.0E7` and `-0.0` go out as given) or `strings`; or per amount.
   */
  amountsAs?: 'numbers' | 'strings' | Partial<Record<AmountField, 'number' | 'string'>>;
  /** Members written as this exact JSON text, over the rest (`{ notification_acknowledgement: '1.0' }`). */
  rawJson?: Record<string, string>;
  /** Fields the bank adds that the client does not know, written as given. */
  extra?: Record<string, unknown>;
}

/** A transfer for tests that need one: amounts as the bank's samples write them. */
export const SAMPLE_TRANSFER: FakeTransfer = Object.freeze({
  sessionId: '000013261122140509123456789012',
  settlementId: '202611221405091234567890',
  accountNumber: '0123456789',
  transactionAmount: '1000.0',
  settledAmount: '955.0',
  feeAmount: '45.0',
  vatAmount: '0.0',
  tranRemarks: 'Payment for order 1043',
});

const AMOUNTS = ['transactionAmount', 'settledAmount', 'feeAmount', 'vatAmount'] as const;
type AmountField = (typeof AMOUNTS)[number];

/** The bank's "not known", as its guide describes it: empty ids and strings, every amount `0.0`. */
export const NOT_FOUND =
  '{"sessionId":"","settlementId":"","initiationTranRef":"","accountNumber":"","tranRemarks":"Transaction not found!!!",' +
  '"transactionAmount":0.0,"settledAmount":0.0,"feeAmount":0.0,"vatAmount":0.0,"currency":"","sourceAccountNumber":"",' +
  '"sourceAccountName":"","sourceBankCode":"","sourceBankName":"","channelId":"","tranDateTime":"","settlementDateTime":"",' +
  '"stamp_duty_flg":0,"post_flg":0,"notification_acknowledgement":0}';

/** Ops 15/16's body for `transfer`, amounts as raw number text (or strings), written by hand: no float ever holds them. */
export function verifyAnswerText(transfer: FakeTransfer): string {
  const { amountsAs = 'numbers', extra = {}, rawJson = {}, notification_acknowledgement = 1, ...fields } = transfer;
  const values: Record<string, unknown> = {
    sessionId: fields.sessionId,
    settlementId: fields.settlementId,
    initiationTranRef: fields.initiationTranRef ?? '',
    accountNumber: fields.accountNumber,
    tranRemarks: fields.tranRemarks ?? 'Payment for order',
    transactionAmount: fields.transactionAmount,
    settledAmount: fields.settledAmount ?? fields.transactionAmount,
    feeAmount: fields.feeAmount ?? '0.0',
    vatAmount: fields.vatAmount ?? '0.0',
    currency: fields.currency ?? 'NGN',
    sourceAccountNumber: fields.sourceAccountNumber ?? '0011223344',
    sourceAccountName: fields.sourceAccountName ?? 'CHUKWUEMEKA OBI',
    sourceBankCode: fields.sourceBankCode ?? '000013',
    sourceBankName: fields.sourceBankName ?? 'GTBank',
    channelId: fields.channelId ?? '1',
    tranDateTime: fields.tranDateTime ?? '2026-11-22 14:05:09',
    settlementDateTime: fields.settlementDateTime ?? '11/22/2026 2:05:41 PM',
    stamp_duty_flg: 0,
    post_flg: 1,
    notification_acknowledgement,
    ...extra,
  };
  const asNumber = (name: string) => {
    if (!(AMOUNTS as readonly string[]).includes(name)) return false;
    const style = typeof amountsAs === 'string' ? amountsAs : (amountsAs[name as AmountField] ?? 'number');
    return style === 'numbers' || style === 'number';
  };
  const members = Object.entries(values).map(([name, value]) => {
    const text = rawJson[name] ?? (asNumber(name) ? String(value) : JSON.stringify(value));
    return `${JSON.stringify(name)}:${text}`;
  });
  for (const [name, text] of Object.entries(rawJson)) if (!(name in values)) members.push(`${JSON.stringify(name)}:${text}`);
  return `{${members.join(',')}}`;
}

/** Op 14's body for `transfer`, as the bank sends it: amounts as text. */
export function notificationOf(transfer: FakeTransfer): Record<string, string> {
  return {
    sessionId: transfer.sessionId,
    accountNumber: transfer.accountNumber,
    tranRemarks: transfer.tranRemarks ?? 'Payment for order',
    transactionAmount: transfer.transactionAmount,
    settledAmount: transfer.settledAmount ?? transfer.transactionAmount,
    feeAmount: transfer.feeAmount ?? '0.00',
    vatAmount: transfer.vatAmount ?? '0.00',
    currency: transfer.currency ?? 'NGN',
    initiationTranRef: transfer.initiationTranRef ?? '',
    settlementId: transfer.settlementId,
    sourceAccountNumber: transfer.sourceAccountNumber ?? '0011223344',
    sourceAccountName: transfer.sourceAccountName ?? 'CHUKWUEMEKA OBI',
    sourceBankName: transfer.sourceBankName ?? 'GTBank',
    channelId: transfer.channelId ?? '1',
    tranDateTime: transfer.tranDateTime ?? '2026-11-22 14:05:09',
  };
}
