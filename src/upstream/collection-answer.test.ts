import { describe, expect, it } from 'vitest';
import { createTestClients, expectUpstreamError, urlsAt } from '../../test/helpers/bank-clients.ts';
import { SAMPLE_TRANSFER, startFakeCollectionBank, type FakeTransfer } from '../../test/helpers/fake-collection-bank.ts';
import { decimalValue } from '../domain/index.ts';

const TRANSFER = SAMPLE_TRANSFER;

/** The fake holding TRANSFER, or answering `text` about it, and clients on it. */
async function bankAnswering(text?: string) {
  const bank = await startFakeCollectionBank();
  bank.know(TRANSFER);
  if (text !== undefined) bank.answer(TRANSFER.settlementId, { text, contentType: 'application/json' });
  return { bank, ...createTestClients(urlsAt(bank.url)) };
}

/** The fake holding TRANSFER with these members written as given, and the client's reading of it by settlementId. */
async function readWith(rawJson: Record<string, string>, amountsAs: FakeTransfer['amountsAs'] = 'numbers') {
  const bank = await startFakeCollectionBank();
  bank.know({ ...TRANSFER, rawJson, amountsAs });
  const { clients } = createTestClients(urlsAt(bank.url));
  return clients.collection.verifyBySettlementId(TRANSFER.settlementId);
}

const RECORD = `{"sessionId":"${TRANSFER.sessionId}","settlementId":"${TRANSFER.settlementId}","accountNumber":"0123456789","transactionAmount":1000.0}`;

describe('only an answer about that transfer is a verdict (ops 15 and 16)', () => {
  it.each([
    ['the bare envelope gateways answer', '{"requestSuccessful":false,"responseCode":"96"}', '96', undefined],
    [
      'an envelope with a message',
      '{"requestSuccessful":false,"responseCode":"96","responseMessage":"System malfunction"}',
      '96',
      'System malfunction',
    ],
    [
      'an envelope saying not found in its own words',
      '{"responseCode":"25","responseMessage":"Transaction not found"}',
      '25',
      'Transaction not found',
    ],
    ['requestSuccessful false alone', '{"requestSuccessful":false}', undefined, undefined],
    ['requestSuccessful as text, responseCode as a number', '{"requestSuccessful":"false","responseCode":96}', '96', undefined],
    [
      'an envelope over the not-found shape',
      '{"sessionId":"","settlementId":"","tranRemarks":"Transaction not found!!!","requestSuccessful":false,"responseCode":"91"}',
      '91',
      undefined,
    ],
  ])('fails the ask on %s: UPSTREAM_REJECTED with the bank code, never "not found"', async (_what, text, responseCode, responseMessage) => {
    const { clients } = await bankAnswering(text);
    const error = await expectUpstreamError(clients.collection.verifyBySettlementId(TRANSFER.settlementId), 'UPSTREAM_REJECTED');
    expect(error.extensions.responseCode).toBe(responseCode);
    expect(error.extensions.responseMessage).toBe(responseMessage);
  });

  it.each([
    ['an empty object', '{}'],
    // The spec documents the record at the top, with no wrapper: one is not unwrapped on a guess.
    ['the record under a wrapper', `{"data":${RECORD}}`],
    ['the record under a wrapper with an approval', `{"requestSuccessful":true,"responseCode":"00","data":${RECORD}}`],
    ['empty ids with other remarks', '{"sessionId":"","settlementId":"","tranRemarks":"Payment for order","transactionAmount":0.0}'],
    ['the not-found remarks without the ids', '{"tranRemarks":"Transaction not found!!!"}'],
    ['only the sessionId', `{"sessionId":"${TRANSFER.sessionId}","settlementId":"","accountNumber":"0123456789","transactionAmount":1.0}`],
    ['JSON null', 'null'],
  ])('fails the ask on %s: UPSTREAM_INVALID_RESPONSE, never "not found"', async (_what, text) => {
    const { clients } = await bankAnswering(text);
    await expectUpstreamError(clients.collection.verifyBySettlementId(TRANSFER.settlementId), 'UPSTREAM_INVALID_RESPONSE');
  });

  it.each([
    ['in capitals', '"TRANSACTION NOT FOUND"', '""'],
    ['with null ids', '"Transaction not found!!!"', 'null'],
    ['with blank ids', '"Transaction Not Found."', '"  "'],
  ])('reads the documented not-found answer %s as null', async (_what, remarks, id) => {
    const { clients } = await bankAnswering(
      `{"sessionId":${id},"settlementId":${id},"accountNumber":"","tranRemarks":${remarks},"transactionAmount":0.0,"notification_acknowledgement":0}`,
    );
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toBeNull();
  });

  it('reads a record that carries an approval beside it', async () => {
    const { clients } = await bankAnswering(RECORD.replace('{', '{"requestSuccessful":true,"responseCode":"00",'));
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toMatchObject({ transactionAmount: '1000.0' });
  });

  it('op 15: fails the ask on a record about another sessionId', async () => {
    const bank = await startFakeCollectionBank();
    bank.answer(TRANSFER.sessionId, { text: RECORD.replace(TRANSFER.sessionId, 'N-OTHER') });
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.collection.verifyBySessionId(TRANSFER.sessionId), 'UPSTREAM_INVALID_RESPONSE');
  });

  it('fails every ask while the bank answers an envelope to all, and reads them again once it stops', async () => {
    const { bank, clients } = await bankAnswering();
    bank.answerEvery({ declined: '96', message: 'System malfunction' });
    await expectUpstreamError(clients.collection.verifyBySettlementId(TRANSFER.settlementId), 'UPSTREAM_REJECTED');
    await expectUpstreamError(clients.collection.verifyBySessionId(TRANSFER.sessionId), 'UPSTREAM_REJECTED');
    await expectUpstreamError(clients.collection.verifyBySettlementId('S-NEVER-SENT'), 'UPSTREAM_REJECTED');
    bank.answerEvery();
    await expect(clients.collection.verifyBySettlementId(TRANSFER.settlementId)).resolves.toMatchObject({ settledAmount: '955.0' });
    await expect(clients.collection.verifyBySettlementId('S-NEVER-SENT')).resolves.toBeNull();
  });
});

describe('amounts as the bank writes them (ops 15 and 16)', () => {
  it.each([
    ['1.0E7', '10000000'],
    ['"1.0E7"', '10000000'],
    ['1.0E+7', '10000000'],
    ['"1.23456789E8"', '123456789'],
    ['1.5e-1', '0.15'],
    ['"1.5e-1"', '0.15'],
    ['9.999999999999999E13', '99999999999999.99'],
    ['99999999999999.99', '99999999999999.99'],
    ['"99999999999999.99"', '99999999999999.99'],
    ['-0.0', '0.0'],
    ['"-0.0"', '0.0'],
    ['-0.0E0', '0.0'],
    ['" 955.00"', '955.00'],
    ['"955.00 "', '955.00'],
    ['" 1.0E7 "', '10000000'],
  ])('reads %s exactly as %s', async (written, plain) => {
    const record = await readWith({ transactionAmount: written, feeAmount: written });
    expect(record).toMatchObject({ transactionAmount: plain, feeAmount: plain });
    // Plain decimal text, as the comparisons read it.
    expect(decimalValue(record!.transactionAmount)).toBe(decimalValue(plain));
  });

  it.each([
    ['a negative amount', '-5.00'],
    ['a negative amount as text', '"-1.0E2"'],
    ['a negative kobo', '"-0.01"'],
    ['words', '"one thousand"'],
    ['thousands separators', '"1,000.00"'],
    ['two points', '"12.5.0"'],
    ['a hexadecimal number', '"0x10"'],
    ['Infinity', '"Infinity"'],
    ['a plus sign', '"+5.00"'],
    ['a boolean', 'true'],
    ['an exponent past any amount', '1e400'],
    ['more digits than the store holds', '"1234567890123456789.00"'],
  ])('refuses %s as unreadable: the ask fails, nothing is decided', async (_what, written) => {
    const bank = await startFakeCollectionBank();
    bank.know({ ...TRANSFER, rawJson: { settledAmount: written } });
    const { clients } = createTestClients(urlsAt(bank.url));
    await expectUpstreamError(clients.collection.verifyBySettlementId(TRANSFER.settlementId), 'UPSTREAM_INVALID_RESPONSE');
  });

  it.each(['1', '1.0', '"1"', '"1.0"', '" 1 "', 'true'])('reads notification_acknowledgement %s as true', async (written) => {
    await expect(readWith({ notification_acknowledgement: written })).resolves.toMatchObject({ acknowledged: true });
  });

  it.each(['0', '0.0', '"0"', 'false', 'null', '"yes"', '2'])('reads notification_acknowledgement %s as false', async (written) => {
    await expect(readWith({ notification_acknowledgement: written })).resolves.toMatchObject({ acknowledged: false });
  });

  it('trims the ids it compares: a sessionId written with spaces is the one asked for', async () => {
    const bank = await startFakeCollectionBank();
    bank.know({ ...TRANSFER, rawJson: { sessionId: ` " ${TRANSFER.sessionId} "` } });
    const { clients } = createTestClients(urlsAt(bank.url));
    await expect(clients.collection.verifyBySessionId(TRANSFER.sessionId)).resolves.toMatchObject({ sessionId: TRANSFER.sessionId });
    await expect(clients.collection.verifyBySessionId(` ${TRANSFER.sessionId} `)).resolves.toMatchObject({ sessionId: TRANSFER.sessionId });
  });
});
