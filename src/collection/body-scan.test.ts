import { describe, expect, it } from 'vitest';
import { boundedSessionIdOf, duplicateKeyOf, MAX_ECHOED_SESSION_ID, nestsDeeperThan } from './body-scan.ts';

describe('duplicateKeyOf', () => {
  const of = (text: string) => duplicateKeyOf(text, JSON.parse(text));

  it.each([
    ['{"transactionAmount":"1.00","transactionAmount":"950000.00"}', 'transactionAmount'],
    ['{"a":1, "b":{"c":[{"d":1,"d":2}]}}', 'd'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"x":{"k":1},"y":{"k":1},"x" : 2}', 'x'],
    // The value dropped held colons, the one kept none: counting still sees one key too many.
    ['{"t":"14:05:09","t":"now","u":"a:b"}', 't'],
    ['{"a:b":1,"a:b":2}', 'a:b'],
  ])('finds the key given twice in one object of %s', (text, key) => {
    expect(of(text)).toBe(key);
  });

  it.each([
    '{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}',
    '{"a":"\\"a\\":","b\\\\":"a","c":"\\\\"}',
    '{"tranDateTime":"2026-11-22 14:05:09","note":"{\\"a\\":1,\\"a\\":2}"}',
    '{"tranDateTime":"2026-11-22 14:05:09","note":"a:b:c", "k:1":["x:y",{"z:":":"}]}',
    '[{"a":1},{"a":1}]',
    '{}',
  ])('finds none in %s', (text) => {
    expect(of(text)).toBeUndefined();
  });

  it('walks a body as deep as the largest one the webhook reads without overflowing the stack', () => {
    expect(of(`{"a":${arrays(30_000)}}`)).toBeUndefined();
    expect(of(`{"a":${arrays(30_000)},"a":1}`)).toBe('a');
  });
});

/** `levels` arrays inside one another, as text. */
const arrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('nestsDeeperThan', () => {
  it('counts the outermost array or object as the first level', () => {
    expect(nestsDeeperThan(JSON.parse(arrays(32)), 32)).toBe(false);
    expect(nestsDeeperThan(JSON.parse(arrays(33)), 32)).toBe(true);
    expect(nestsDeeperThan(JSON.parse('{"a":[1,{"b":"c"}],"d":{}}'), 3)).toBe(false);
    expect(nestsDeeperThan(JSON.parse('{"a":[1,{"b":"c"}],"d":{}}'), 2)).toBe(true);
    expect(nestsDeeperThan('text', 0)).toBe(false);
  });

  it('measures a body as deep as the largest one the webhook reads without overflowing the stack', () => {
    expect(nestsDeeperThan(JSON.parse(arrays(32 * 1024)), 32)).toBe(true);
  });
});

describe('boundedSessionIdOf', () => {
  const of = (text: string) => boundedSessionIdOf(Buffer.from(text));

  it('reads the sessionId, escapes decoded, without parsing the rest of the body', () => {
    expect(of('{"accountNumber":"1","sessionId" :  "S-\\u00e9\\"1", this is not JSON')).toBe('S-é"1');
    expect(of('{"note":"sessionId","sessionId":"S-2"}')).toBe('S-2');
  });

  it(`cuts it to its first ${MAX_ECHOED_SESSION_ID} characters, never between the halves of a pair`, () => {
    expect(of(`{"sessionId":"${'S'.repeat(100_000)}"}`)).toBe('S'.repeat(MAX_ECHOED_SESSION_ID));
    expect(of(`{"sessionId":"${'\\u00e9'.repeat(1_000)}`)).toBe('é'.repeat(MAX_ECHOED_SESSION_ID));
    expect(of(`{"sessionId":"${'S'.repeat(255)}🚀"}`)).toBe('S'.repeat(255));
  });

  it("answers '' where no sessionId can be read", () => {
    expect(of('{"sessionId":1500}')).toBe('');
    expect(of('{"sessionId":"S-\u0001"}')).toBe('');
    expect(of('not json at all')).toBe('');
  });
});
