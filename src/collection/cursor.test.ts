import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.ts';

describe('cursors', () => {
  it('carry a log position, opaque and URL-safe, and give it back', () => {
    const position = { txid: 8_123_456_789, seq: 42 };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain('42');
    expect(decodeCursor(cursor)).toEqual(position);
    expect(decodeCursor(encodeCursor({ txid: 0, seq: 7 }))).toEqual({ txid: 0, seq: 7 });
  });

  it.each([
    ['not base64url', 'n:1!'],
    ['another prefix', Buffer.from('x:1').toString('base64url')],
    ['no seq', Buffer.from('p:12').toString('base64url')],
    ['a negative seq', Buffer.from('p:1.-3').toString('base64url')],
    ['a fraction', Buffer.from('p:1.1.5').toString('base64url')],
    ['a seq alone', Buffer.from('n:17').toString('base64url')],
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
});
