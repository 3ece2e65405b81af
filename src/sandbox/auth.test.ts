import { describe, expect, it } from 'vitest';
import { parseBasic, safeEqual } from './auth.ts';
import { basic } from '../../test/helpers/sandbox.ts';

describe('parseBasic', () => {
  it('splits at the first colon, so a password may hold colons', () => {
    expect(parseBasic(basic('user', 'pa:ss:word'))).toEqual({ username: 'user', password: 'pa:ss:word' });
  });

  it('decodes UTF-8 credentials', () => {
    expect(parseBasic(basic('adaẹze', 'ọ̀rọ̀-aṣínà₦'))).toEqual({ username: 'adaẹze', password: 'ọ̀rọ̀-aṣínà₦' });
  });

  it('accepts the scheme in any case', () => {
    expect(parseBasic(`basic ${Buffer.from('a:b').toString('base64')}`)).toEqual({ username: 'a', password: 'b' });
  });

  it.each([undefined, '', 'Bearer abc', 'Basic', `Basic ${Buffer.from('no-colon').toString('base64')}`])(
    'gives undefined for %j',
    (header) => {
      expect(parseBasic(header)).toBeUndefined();
    },
  );
});

describe('safeEqual', () => {
  it('compares values of different lengths without throwing', () => {
    expect(safeEqual('short', 'a much longer expected value')).toBe(false);
    expect(safeEqual('same', 'same')).toBe(true);
    expect(safeEqual(undefined, 'x')).toBe(false);
  });
});
