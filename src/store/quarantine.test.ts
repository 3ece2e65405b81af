import { describe, expect, it } from 'vitest';
import { storeBackends } from '../../test/helpers/stores.ts';
import type { NewQuarantinedDelivery } from '../domain/index.ts';
import type { QuarantineQuery } from './types.ts';

let counter = 0;

/** A delivery to keep; each call a new sessionId and a later receivedAt unless given. */
function delivery(overrides: Partial<NewQuarantinedDelivery> = {}): NewQuarantinedDelivery {
  counter += 1;
  return {
    kind: 'REJECTED',
    reason: 'invalid_account_number',
    detail: null,
    responseCode: '02',
    receivedAt: new Date(Date.UTC(2026, 10, 22, 9, 0, counter)).toISOString(),
    sessionId: `S-${counter}`,
    settlementId: `STL-${counter}`,
    accountNumber: '012345678',
    rawBody: new TextEncoder().encode(`{"sessionId":"S-${counter}","accountNumber":"012345678"}`),
    ...overrides,
  };
}

const page = (query: Partial<QuarantineQuery> = {}): QuarantineQuery => ({
  before: undefined,
  limit: 20,
  kind: undefined,
  reviewed: undefined,
  from: undefined,
  to: undefined,
  ...query,
});

const MANY = 1_000_000;

describe.each(storeBackends)('the quarantine on $name', (backend) => {
  const test = it.runIf(backend.enabled);
  const testShared = it.runIf(backend.enabled && backend.shared);

  async function setup() {
    const database = await backend.create();
    const store = await database.open();
    return { database, store, quarantine: store.quarantine };
  }

  test('keeps every field, the body byte for byte whatever its bytes, and lists the newest first', async () => {
    const { quarantine } = await setup();
    // Odd whitespace, a byte-order mark, a NUL, and bytes that are not UTF-8 at all.
    const odd = Uint8Array.from([0xef, 0xbb, 0xbf, 0x20, 0x09, 0x0d, 0x0a, 0x7b, 0x00, 0xff, 0xfe, 0x22, 0x7d, 0x20, 0x0a]);
    const first = delivery({ kind: 'CONFLICT', reason: 'conflicting_duplicate', detail: 'transactionAmount: 950000.00 (stored: 1500.00)', responseCode: '01', accountNumber: '0123456789' });
    const second = delivery({ kind: 'UNSTORABLE', reason: 'store_refused_row', rawBody: odd, sessionId: null, settlementId: null, accountNumber: null });
    expect(await quarantine.keep([first, second], MANY)).toBe(2);

    const listed = await quarantine.list(page());
    expect(listed).toEqual([
      { ...second, id: expect.stringMatching(/^\d+$/), reviewedAt: null, reviewNote: null, reviewedBy: null },
      { ...first, id: expect.stringMatching(/^\d+$/), reviewedAt: null, reviewNote: null, reviewedBy: null },
    ]);
    expect(Buffer.from(listed[0]!.rawBody)).toEqual(Buffer.from(odd));
    expect(Number(listed[0]!.id)).toBeGreaterThan(Number(listed[1]!.id));
  });

  test('keeps ids with a NUL or a lone surrogate without them, failing no other delivery', async () => {
    const { quarantine } = await setup();
    const odd = delivery({ sessionId: 'S\u0000-1', settlementId: 'half \ud83d a pair' });
    const plain = delivery();
    expect(await quarantine.keep([odd, plain], MANY)).toBe(2);
    const [, kept] = await quarantine.list(page());
    expect(kept).toMatchObject({ sessionId: 'S-1', settlementId: 'half \ufffd a pair' });
  });

  test('keeps deliveries only while fewer than the bound await review, the first ones first', async () => {
    const { quarantine } = await setup();
    const [a, b, c] = [delivery(), delivery(), delivery()];
    expect(await quarantine.keep([a, b, c], 2)).toBe(2);
    expect((await quarantine.list(page())).map((kept) => kept.sessionId)).toEqual([b.sessionId, a.sessionId]);
    expect(await quarantine.keep([delivery()], 2)).toBe(0);
    expect(await quarantine.countUnreviewed()).toBe(2);

    // A review makes room for one more.
    const [newest] = await quarantine.list(page());
    await quarantine.review({ id: newest!.id, note: 'credited by hand', reviewedBy: 'ops-1', reviewedAt: new Date().toISOString() });
    expect(await quarantine.countUnreviewed()).toBe(1);
    expect(await quarantine.keep([c, delivery()], 2)).toBe(1);
    expect(await quarantine.countUnreviewed()).toBe(2);
  });

  test('records a review once: when, the note and by whom; a second keeps the first, an unknown id changes nothing', async () => {
    const { quarantine } = await setup();
    await quarantine.keep([delivery(), delivery()], MANY);
    const [kept, other] = await quarantine.list(page());
    const review = { id: kept!.id, note: 'Called the bank with the session id; credited by hand.', reviewedBy: 'ops-1', reviewedAt: '2026-11-23T08:00:00.000Z' };

    expect(await quarantine.review(review)).toEqual({
      status: 'reviewed',
      delivery: { ...kept, reviewedAt: review.reviewedAt, reviewNote: review.note, reviewedBy: 'ops-1' },
    });
    expect(await quarantine.review({ ...review, note: 'again', reviewedBy: null, reviewedAt: '2026-11-24T08:00:00.000Z' })).toEqual({
      status: 'already-reviewed',
      delivery: { ...kept, reviewedAt: review.reviewedAt, reviewNote: review.note, reviewedBy: 'ops-1' },
    });
    for (const id of ['999999999', '0', '-1', 'abc', '1e3', '']) {
      expect(await quarantine.review({ ...review, id })).toEqual({ status: 'unknown' });
    }
    expect((await quarantine.list(page({ reviewed: false }))).map((left) => left.id)).toEqual([other!.id]);
  });

  test('filters by kind, review and time received, and pages before an id', async () => {
    const { quarantine } = await setup();
    const kinds = ['REJECTED', 'CONFLICT', 'UNSTORABLE', 'REJECTED', 'CONFLICT'] as const;
    const kept = kinds.map((kind) => delivery({ kind, receivedAt: new Date(Date.UTC(2026, 10, 22, 9, counter)).toISOString() }));
    await quarantine.keep(kept, MANY);
    const all = await quarantine.list(page());
    const sessions = (records: { sessionId: string | null }[]) => records.map((record) => record.sessionId);
    expect(sessions(all)).toEqual(sessions(kept).reverse());
    await quarantine.review({ id: all[1]!.id, note: 'raised with the bank', reviewedBy: null, reviewedAt: new Date().toISOString() });

    expect(sessions(await quarantine.list(page({ kind: 'CONFLICT' })))).toEqual([kept[4]!.sessionId, kept[1]!.sessionId]);
    expect(sessions(await quarantine.list(page({ reviewed: true })))).toEqual([kept[3]!.sessionId]);
    expect(sessions(await quarantine.list(page({ reviewed: false, kind: 'REJECTED' })))).toEqual([kept[0]!.sessionId]);
    const range = { from: new Date(kept[1]!.receivedAt), to: new Date(kept[3]!.receivedAt) };
    expect(sessions(await quarantine.list(page(range)))).toEqual([kept[2]!.sessionId, kept[1]!.sessionId]);
    expect(sessions(await quarantine.list(page({ from: range.to })))).toEqual([kept[4]!.sessionId, kept[3]!.sessionId]);
    expect(sessions(await quarantine.list(page({ before: Number(all[1]!.id), limit: 2 })))).toEqual([kept[2]!.sessionId, kept[1]!.sessionId]);
  });

  testShared('keeps the quarantine across close and reopen', async () => {
    const { database, store } = await setup();
    const kept = delivery();
    await store.quarantine.keep([kept], MANY);
    await store.close();
    const reopened = await database.open();
    expect(await reopened.quarantine.list(page())).toEqual([expect.objectContaining({ sessionId: kept.sessionId, rawBody: kept.rawBody })]);
    expect(await reopened.quarantine.countUnreviewed()).toBe(1);
  });

  testShared('holds the bound exactly when two stores on one database keep at once', async () => {
    const { database, store } = await setup();
    const other = await database.open();
    const batches = Array.from({ length: 10 }, () => [delivery(), delivery(), delivery()]);
    const kept = await Promise.all(batches.map((batch, index) => (index % 2 === 0 ? store : other).quarantine.keep(batch, 7)));
    expect(kept.reduce((sum, n) => sum + n, 0)).toBe(7);
    expect(await store.quarantine.countUnreviewed()).toBe(7);
  });

  test('refuses every call once the store is closed', async () => {
    const { store } = await setup();
    await store.close();
    const calls = [
      store.quarantine.keep([delivery()], MANY),
      store.quarantine.list(page()),
      store.quarantine.review({ id: '1', note: 'n', reviewedBy: null, reviewedAt: new Date().toISOString() }),
      store.quarantine.countUnreviewed(),
    ];
    for (const call of calls) await expect(call).rejects.toThrow(/store is closed/);
  });
});
