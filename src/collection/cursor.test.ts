import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { LogPosition } from '../domain/index.ts';
import { cursorPosition, decodeCursor, encodeCursor } from './cursor.ts';

const legacy = (seq: number | string) => Buffer.from(`n:${seq}`, 'utf8').toString('base64url');

/** A store that knows the position of some seqs, and counts the look-ups. */
function storeKnowing(known: Record<number, LogPosition>) {
  const asked: number[] = [];
  return {
    asked,
    positionOfSeq: async (seq: number) => (asked.push(seq), known[seq]),
  };
}

describe('cursors', () => {
  it('carry a log position, opaque and URL-safe, and give it back', () => {
    const position = { txid: 8_123_456_789, seq: 42 };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain('42');
    expect(decodeCursor(cursor)).toEqual({ position });
    expect(decodeCursor(encodeCursor({ txid: 0, seq: 7 }))).toEqual({ position: { txid: 0, seq: 7 } });
  });

  it('still read the seq-only cursors of earlier releases', () => {
    expect(decodeCursor(legacy(17))).toEqual({ legacySeq: 17 });
  });

  it.each([
    ['not base64url', 'n:1!'],
    ['another prefix', Buffer.from('x:1').toString('base64url')],
    ['no seq', Buffer.from('p:12').toString('base64url')],
    ['a negative seq', Buffer.from('p:1.-3').toString('base64url')],
    ['a fraction', legacy('1.5')],
    ['a number beyond 2^53', Buffer.from('p:1.99999999999999999').toString('base64url')],
    ['nothing', ''],
  ])('refuse %s with BAD_USER_INPUT naming the argument', (_, cursor) => {
    const error = (() => {
      try {
        decodeCursor(cursor, 'after');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(GraphQLError);
    expect(error).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect((error as Error).message).toContain('after');
  });

  it('resolve a position without asking the store', async () => {
    const store = storeKnowing({});
    expect(await cursorPosition(encodeCursor({ txid: 900, seq: 3 }), store)).toEqual({ txid: 900, seq: 3 });
    expect(store.asked).toEqual([]);
  });

  it("resolve a seq-only cursor to its notification's position, or to (0, seq) when none has that seq", async () => {
    const store = storeKnowing({ 5: { txid: 0, seq: 5 }, 9: { txid: 1_234, seq: 9 } });
    expect(await cursorPosition(legacy(5), store)).toEqual({ txid: 0, seq: 5 });
    expect(await cursorPosition(legacy(9), store)).toEqual({ txid: 1_234, seq: 9 });
    expect(await cursorPosition(legacy(6), store)).toEqual({ txid: 0, seq: 6 });
    expect(store.asked).toEqual([5, 9, 6]);
  });
});
