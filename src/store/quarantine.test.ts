import { describe, expect, it } from 'vitest';
import { storeBackends } from '../../test/helpers/stores.ts';
import type { NewQuarantinedDelivery } from '../domain/index.ts';
import type { KeepOutcome, QuarantineQuery } from './types.ts';

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

/** Bounds nothing here reaches. */
const MANY = { maxRows: 1_000_000, maxBytes: 1024 ** 4 };
const rows = (maxRows: number) => ({ ...MANY, maxRows });
const bytes = (maxBytes: number) => ({ ...MANY, maxBytes });
const keptCount = (outcomes: readonly KeepOutcome[]) => outcomes.filter((outcome) => outcome === 'kept').length;

describe.each(storeBackends)('the quarantine on $name', (backend) => {
  const test = backend.enabled ? it : it.skip;
  const testShared = backend.enabled && backend.shared ? it : it.skip;

  async function setup() {
    const database = await backend.create();
    const store = await database.open();
    return { database, store, quarantine: store.quarantine };
  }

  test('keeps every field, the body byte for byte whatever its bytes, and lists the newest first', async () => {
    const { quarantine } = await setup();
    // Odd whitespace, a byte-order mark, a NUL, and bytes that are not UTF-8 at all.
    const odd = Uint8Array.from([0xef, 0xbb, 0xbf, 0x20, 0x09, 0x0d, 0x0a, 0x7b, 0x00, 0xff, 0xfe, 0x22, 0x7d, 0x20, 0x0a]);
    const first = delivery({
      kind: 'CONFLICT',
      reason: 'conflicting_duplicate',
      detail: 'transactionAmount: 950000.00 (stored: 1500.00)',
      responseCode: '01',
      accountNumber: '0123456789',
    });
    const second = delivery({
      kind: 'UNSTORABLE',
      reason: 'store_refused_row',
      rawBody: odd,
      sessionId: null,
      settlementId: null,
      accountNumber: null,
    });
    expect(await quarantine.keep([first, second], MANY)).toEqual(['kept', 'kept']);

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
    expect(await quarantine.keep([odd, plain], MANY)).toEqual(['kept', 'kept']);
    const [, kept] = await quarantine.list(page());
    expect(kept).toMatchObject({ sessionId: 'S-1', settlementId: 'half \ufffd a pair' });
  });

  test('keeps ids of any length cut to 64 characters, the body whole, alike on every backend', async () => {
    const { quarantine } = await setup();
    // A PostgreSQL btree entry holds about 2.7 KB: a few KB of id in an indexed column would be refused there, taken by SQLite.
    const long = delivery({ sessionId: 'S'.repeat(3_500), settlementId: '9'.repeat(3_500), accountNumber: '1'.repeat(3_500) });
    const body = Buffer.from(long.rawBody);
    expect(await quarantine.keep([long], MANY)).toEqual(['kept']);
    const [kept] = await quarantine.list(page());
    expect(kept).toMatchObject({ sessionId: 'S'.repeat(64), settlementId: '9'.repeat(64), accountNumber: '1'.repeat(64) });
    expect(Buffer.from(kept!.rawBody)).toEqual(body);
    expect(await quarantine.withTransferIds({ settlementIds: [], sessionIds: ['S'.repeat(64)], limit: 10 })).toHaveLength(1);
  });

  test('answers each delivery for itself: one the database refuses fails alone, its batch-mates kept within the bounds', async () => {
    const { database, quarantine } = await setup();
    await database.refuseQuarantineRow('SPOISON');
    const poison = delivery({ sessionId: 'SPOISON' });
    const honest = Array.from({ length: 5 }, () => delivery());
    const outcomes = await quarantine.keep([honest[0]!, honest[1]!, poison, honest[2]!, honest[3]!, honest[4]!], rows(4));
    expect(outcomes.map((outcome) => (typeof outcome === 'string' ? outcome : 'failed'))).toEqual([
      'kept',
      'kept',
      'failed',
      'kept',
      'kept',
      'over_rows',
    ]);
    expect(outcomes[2]).toEqual({ failed: expect.objectContaining({ message: expect.stringContaining('refused') }) });
    expect((await quarantine.list(page())).map((kept) => kept.sessionId).reverse()).toEqual(honest.slice(0, 4).map((one) => one.sessionId));
    // Alone, it fails as a whole batch does.
    await expect(quarantine.keep([poison], MANY)).rejects.toThrow('refused');
  });

  test('keeps deliveries only while fewer than the bound await review, the first ones first', async () => {
    const { quarantine } = await setup();
    const [a, b, c] = [delivery(), delivery(), delivery()];
    expect(await quarantine.keep([a, b, c], rows(2))).toEqual(['kept', 'kept', 'over_rows']);
    expect((await quarantine.list(page())).map((kept) => kept.sessionId)).toEqual([b.sessionId, a.sessionId]);
    expect(await quarantine.keep([delivery()], rows(2))).toEqual(['over_rows']);
    expect(await quarantine.countUnreviewed()).toBe(2);

    // A review makes room for one more.
    const [newest] = await quarantine.list(page());
    await quarantine.review({ id: newest!.id, note: 'credited by hand', reviewedBy: 'ops-1', reviewedAt: new Date().toISOString() });
    expect(await quarantine.countUnreviewed()).toBe(1);
    expect(await quarantine.keep([c, delivery()], rows(2))).toEqual(['kept', 'over_rows']);
    expect(await quarantine.countUnreviewed()).toBe(2);
  });

  test('keeps deliveries only while their bodies awaiting review stay within the bytes bound, each that fits in turn', async () => {
    const { quarantine } = await setup();
    const sized = (size: number) => delivery({ rawBody: new Uint8Array(size).fill(0x7b) });
    // 40 + 50 fit in 100; 20 more would pass it; a later 10 still fits.
    expect(await quarantine.keep([sized(40), sized(50), sized(20), sized(10)], bytes(100))).toEqual(['kept', 'kept', 'over_bytes', 'kept']);
    expect(await quarantine.keep([sized(1)], bytes(100))).toEqual(['over_bytes']);
    expect(await quarantine.keep([sized(0)], bytes(100))).toEqual(['kept']);

    // A review frees its body's bytes.
    const fifty = (await quarantine.list(page())).find((kept) => kept.rawBody.byteLength === 50)!;
    await quarantine.review({ id: fifty.id, note: 'credited by hand', reviewedBy: null, reviewedAt: new Date().toISOString() });
    expect(await quarantine.keep([sized(51), sized(50)], bytes(100))).toEqual(['over_bytes', 'kept']);
  });

  test('counts what awaits review as the database changes, whoever changes it: rows deleted by hand free their room', async () => {
    const { database, quarantine } = await setup();
    await quarantine.keep([delivery(), delivery(), delivery()], MANY);
    const [newest] = await quarantine.list(page());
    await quarantine.review({ id: newest!.id, note: 'done', reviewedBy: null, reviewedAt: new Date().toISOString() });
    // Archiving (docs/operations.md) deletes reviewed rows: nothing awaiting review changes.
    await database.query('DELETE FROM collection_quarantine WHERE reviewed_at IS NOT NULL');
    expect(await quarantine.countUnreviewed()).toBe(2);
    await database.query(`DELETE FROM collection_quarantine WHERE id = (SELECT min(id) FROM collection_quarantine)`);
    expect(await quarantine.countUnreviewed()).toBe(1);
    expect(keptCount(await quarantine.keep([delivery(), delivery()], rows(2)))).toBe(1);
  });

  test('records a review once: when, the note and by whom; a second keeps the first, an unknown id changes nothing', async () => {
    const { quarantine } = await setup();
    await quarantine.keep([delivery(), delivery()], MANY);
    const [kept, other] = await quarantine.list(page());
    const review = {
      id: kept!.id,
      note: 'Called the bank with the session id; credited by hand.',
      reviewedBy: 'ops-1',
      reviewedAt: '2026-11-23T08:00:00.000Z',
    };

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
    expect(sessions(await quarantine.list(page({ before: Number(all[1]!.id), limit: 2 })))).toEqual([
      kept[2]!.sessionId,
      kept[1]!.sessionId,
    ]);
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

  testShared('holds the bytes bound exactly when two stores on one database keep at once', async () => {
    const { database, store } = await setup();
    const other = await database.open();
    const batches = Array.from({ length: 10 }, () => [1, 2, 3].map(() => delivery({ rawBody: new Uint8Array(100) })));
    const kept = await Promise.all(batches.map((batch, index) => (index % 2 === 0 ? store : other).quarantine.keep(batch, bytes(750))));
    expect(kept.reduce((sum, outcomes) => sum + keptCount(outcomes), 0)).toBe(7);
    expect(kept.flat().filter((outcome) => outcome !== 'kept')).toEqual(Array(23).fill('over_bytes'));
  });

  testShared('holds the bound exactly when two stores on one database keep at once', async () => {
    const { database, store } = await setup();
    const other = await database.open();
    const batches = Array.from({ length: 10 }, () => [delivery(), delivery(), delivery()]);
    const kept = await Promise.all(batches.map((batch, index) => (index % 2 === 0 ? store : other).quarantine.keep(batch, rows(7))));
    expect(kept.reduce((sum, outcomes) => sum + keptCount(outcomes), 0)).toBe(7);
    expect(await store.quarantine.countUnreviewed()).toBe(7);
  });

  test("finds the deliveries kept with a transfer's settlementId or sessionId, reviewed or not, newest first and at most the limit", async () => {
    const { quarantine } = await setup();
    const bySettlement = delivery({ settlementId: 'STL-X', sessionId: 'S-other' });
    const bySession = delivery({
      kind: 'CONFLICT',
      reason: 'conflicting_duplicate',
      responseCode: '01',
      settlementId: 'STL-Y',
      sessionId: 'S-X',
    });
    const both = delivery({ settlementId: 'STL-X', sessionId: 'S-X' });
    const unrelated = delivery({ settlementId: 'STL-Z', sessionId: null });
    await quarantine.keep([bySettlement, bySession, both, unrelated, delivery({ settlementId: null, sessionId: null })], MANY);
    const reviewed = (await quarantine.list(page())).find((one) => one.settlementId === 'STL-X' && one.sessionId === 'S-X')!;
    await quarantine.review({ id: reviewed.id, note: 'seen', reviewedBy: null, reviewedAt: new Date().toISOString() });

    const found = await quarantine.withTransferIds({ settlementIds: ['STL-X'], sessionIds: ['S-X'], limit: 10 });
    // Each once, though `both` matches by either id.
    expect(found.map((one) => [one.settlementId, one.sessionId])).toEqual([
      ['STL-X', 'S-X'],
      ['STL-Y', 'S-X'],
      ['STL-X', 'S-other'],
    ]);
    expect(found[0]).toMatchObject({ id: reviewed.id, kind: 'REJECTED', rawBody: both.rawBody, reviewNote: 'seen' });
    expect(await quarantine.withTransferIds({ settlementIds: ['STL-X'], sessionIds: [], limit: 1 })).toHaveLength(1);
    expect(await quarantine.withTransferIds({ settlementIds: ['S-X'], sessionIds: ['STL-X'], limit: 10 })).toEqual([]);
    expect(await quarantine.withTransferIds({ settlementIds: [], sessionIds: [], limit: 10 })).toEqual([]);
  });

  test('refuses every call once the store is closed', async () => {
    const { store } = await setup();
    await store.close();
    const calls = [
      store.quarantine.keep([delivery()], MANY),
      store.quarantine.list(page()),
      store.quarantine.review({ id: '1', note: 'n', reviewedBy: null, reviewedAt: new Date().toISOString() }),
      store.quarantine.countUnreviewed(),
      store.quarantine.withTransferIds({ settlementIds: ['STL-1'], sessionIds: [], limit: 1 }),
    ];
    for (const call of calls) await expect(call).rejects.toThrow(/store is closed/);
  });
});
