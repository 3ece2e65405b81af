import { describe, expect, it } from 'vitest';
import { moneyText } from './amount.ts';

describe('moneyText', () => {
  it.each([
    ['1500.0', '1500.00'],
    ['1500', '1500.00'],
    ['1500.000', '1500.00'],
    ['0100.50', '100.50'],
    ['0', '0.00'],
    ['0.125', '0.125'],
    ['99999999999999.999', '99999999999999.999'],
    ['10000000.0', '10000000.00'],
    ['1.0E7', '1.0E7'],
    ['', ''],
  ])('writes %j as %j', (text, written) => {
    expect(moneyText(text)).toBe(written);
  });
});
