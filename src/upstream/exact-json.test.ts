import { describe, expect, it } from 'vitest';
import { parseKeepingNumberText, plainAmount, withoutExponent } from './exact-json.ts';

const AMOUNTS = new Set(['transactionAmount', 'feeAmount']);

describe('parseKeepingNumberText', () => {
  it('keeps the digits of an amount a double cannot hold, where JSON.parse loses them', () => {
    const text = '{"transactionAmount":99999999999999.99}';
    expect(String((JSON.parse(text) as { transactionAmount: number }).transactionAmount)).not.toBe('99999999999999.99');
    expect(parseKeepingNumberText(text, AMOUNTS)).toEqual({ transactionAmount: '99999999999999.99' });
  });

  it('gives a named field its source text whatever the number, trailing zeros included', () => {
    expect(parseKeepingNumberText('{"transactionAmount":1000.0,"feeAmount":0}', AMOUNTS)).toEqual({
      transactionAmount: '1000.0',
      feeAmount: '0',
    });
  });

  it("writes out a named field's exponent exactly, as a Java writer sends a double of ten million or more", () => {
    expect(parseKeepingNumberText('{"transactionAmount":1.0E7,"feeAmount":5e-2}', AMOUNTS)).toEqual({
      transactionAmount: '10000000',
      feeAmount: '0.05',
    });
    expect(withoutExponent('9.999999999999999E13')).toBe('99999999999999.99');
    expect(withoutExponent('1.25E+2')).toBe('125');
    expect(withoutExponent('0.5E1')).toBe('5');
    expect(withoutExponent('15E-4')).toBe('0.0015');
    expect(withoutExponent('1500.00')).toBe('1500.00');
    // Further than any amount the store holds: left as sent, for the reader to refuse.
    expect(withoutExponent('1E400')).toBe('1E400');
  });

  it('leaves other numbers as numbers where a double holds them, and as text where it does not', () => {
    expect(parseKeepingNumberText('{"flag":1,"id":12345678901234567890,"nested":{"feeAmount":5.50}}', AMOUNTS)).toEqual({
      flag: 1,
      id: '12345678901234567890',
      nested: { feeAmount: '5.50' },
    });
  });

  it('leaves strings alone and refuses what is not JSON', () => {
    expect(parseKeepingNumberText('{"transactionAmount":"1500.00"}', AMOUNTS)).toEqual({ transactionAmount: '1500.00' });
    expect(() => parseKeepingNumberText('<html>', AMOUNTS)).toThrow(SyntaxError);
  });
});

describe('plainAmount', () => {
  it.each([
    ['1000.0', '1000.0'],
    ['1.0E7', '10000000'],
    ['1.0e+7', '10000000'],
    ['1.5e-1', '0.15'],
    ['-0.0', '0.0'],
    ['-0', '0'],
    ['-0.00E3', '0'],
    [' 955.00', '955.00'],
    ['\t955.00\n', '955.00'],
    ['99999999999999.99', '99999999999999.99'],
  ])('reads %j as %s, digit for digit', (text, plain) => {
    expect(plainAmount(text)).toBe(plain);
  });

  it.each(['-5.00', '-1.0E2', '-0.01', '', ' ', '1,000.00', '12.5.0', '.5', '5.', '+5', '0x10', 'Infinity', 'NaN', '1e400', '1 000'])(
    'refuses %j',
    (text) => {
      expect(plainAmount(text)).toBeUndefined();
    },
  );
});
