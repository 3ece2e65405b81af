import { NOTHING_ASKED, UNCHECKED, type CollectionNotificationRecord, type NewCollectionNotification } from '../../src/domain/index.ts';

let counter = 0;

/** A notification as the webhook hands it to the store; each call a new settlementId unless given. */
export function newNotification(overrides: Partial<NewCollectionNotification> = {}): NewCollectionNotification {
  counter += 1;
  // Padded, so settlementIds sort in the order they were made, as the bank's do.
  const settlementId = `2024050110150${String(counter).padStart(6, '0')}`;
  return {
    settlementId,
    sessionId: `100004240501101500${counter}`,
    accountNumber: '0123456789',
    transactionAmount: '1500.00',
    settledAmount: '1490.00',
    feeAmount: '10.00',
    vatAmount: '0.75',
    currency: 'NGN',
    narration: 'Payment for invoice 42',
    initiationTranRef: null,
    sourceAccountNumber: '0987654321',
    sourceAccountName: 'ADAEZE OBI',
    sourceBankName: 'ACCESS BANK',
    channelId: null,
    transactionTime: '2024-05-01T10:15:00.000+01:00',
    receivedAt: '2024-05-01T09:15:01.234Z',
    rawBody: JSON.stringify({ settlementId, transactionAmount: '1500.00' }),
    rawBodyBytes: null,
    ...overrides,
  };
}

/** A notification as the store returns it and pub/sub carries it, with its position. */
export function storedNotification(overrides: Partial<CollectionNotificationRecord> = {}): CollectionNotificationRecord {
  const {
    position = { txid: 0, seq: counter + 1 },
    source = 'WEBHOOK',
    confirmation = { ...UNCHECKED, ...NOTHING_ASKED },
    ...rest
  } = overrides;
  return { position, ...newNotification(rest), source, confirmation };
}
