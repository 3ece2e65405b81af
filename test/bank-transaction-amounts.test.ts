// bankTransaction sets the bank's record beside ours: its amounts are written as ours are (at least
// two decimals, every digit kept), so a client comparing the two sees no false difference, while
// `raw` keeps the bank's own text.
import { describe, expect, it } from 'vitest';
import { notificationBody } from './helpers/app.ts';
import { transferOf } from './helpers/confirming.ts';
import { startFakeCollectionBank } from './helpers/fake-collection-bank.ts';
import { check, SANDBOX_PAIR, startReconcilingApp } from './helpers/reconciling.ts';

describe('bankTransaction amounts', () => {
  it("writes the bank's 1500.0, 10, 1.0E7 and 99999999999999.999 as ours, and keeps the bank's text in raw", async () => {
    const bank = await startFakeCollectionBank(SANDBOX_PAIR);
    const { app, operator } = await startReconcilingApp(bank, { COLLECTION_CONFIRMATION: 'off' });
    const [short, java, fine, strings] = Array.from({ length: 4 }, () => notificationBody());
    bank.know(transferOf(short!, { transactionAmount: '1500.0', settledAmount: '1490.0', feeAmount: '10', vatAmount: '0.750' }));
    bank.know(transferOf(java!, { transactionAmount: '1.0E7', settledAmount: '9.9999955E6', feeAmount: '4.5E1', vatAmount: '0.0' }));
    bank.know(transferOf(fine!, { transactionAmount: '99999999999999.999', settledAmount: '100.5', feeAmount: '0', vatAmount: '0.0075' }));
    bank.know(transferOf(strings!, { amountsAs: 'strings', transactionAmount: '1500.0', settledAmount: '1500', feeAmount: '0.00' }));

    const atBank = async (body: Record<string, unknown>) => {
      const { data, errors } = await check(app, operator, { settlementId: String(body.settlementId) });
      expect(errors).toBeUndefined();
      return data!.bankTransaction.atBank;
    };
    const amounts = ({ transactionAmount, settledAmount, feeAmount, vatAmount }: Record<string, unknown>) => ({
      transactionAmount,
      settledAmount,
      feeAmount,
      vatAmount,
    });
    const first = await atBank(short!);
    expect(amounts(first)).toEqual({ transactionAmount: '1500.00', settledAmount: '1490.00', feeAmount: '10.00', vatAmount: '0.75' });
    expect(amounts(first.raw)).toEqual({ transactionAmount: '1500.0', settledAmount: '1490.0', feeAmount: '10', vatAmount: '0.750' });
    expect(amounts(await atBank(java!))).toEqual({
      transactionAmount: '10000000.00',
      settledAmount: '9999995.50',
      feeAmount: '45.00',
      vatAmount: '0.00',
    });
    expect(amounts(await atBank(fine!))).toEqual({
      transactionAmount: '99999999999999.999',
      settledAmount: '100.50',
      feeAmount: '0.00',
      vatAmount: '0.0075',
    });
    const written = await atBank(strings!);
    expect(amounts(written)).toMatchObject({ transactionAmount: '1500.00', settledAmount: '1500.00', feeAmount: '0.00' });
    expect(written.raw).toMatchObject({ transactionAmount: '1500.0', settledAmount: '1500' });
  });
});
