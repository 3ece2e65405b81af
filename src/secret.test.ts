import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Secret } from './secret.ts';

describe('Secret', () => {
  it('shows as [redacted] in strings, JSON and util.inspect; only reveal() gives the value', () => {
    const secret = new Secret('hunter2');
    // The test is that a template shows no secret, whatever its type.
    // oxlint-disable-next-line typescript/restrict-template-expressions
    const shown = [`${secret}`, JSON.stringify({ secret }), inspect({ secret }, { depth: 5 })].join('\n');
    expect(shown).not.toContain('hunter2');
    expect(shown).toContain('[redacted]');
    expect(secret.reveal()).toBe('hunter2');
  });
});

describe('Secret.equals', () => {
  const secret = new Secret('s3cret-value');

  it('is true for the same value', () => {
    expect(secret.equals('s3cret-value')).toBe(true);
  });

  it('is false for a different value of the same length', () => {
    expect(secret.equals('s3cret-valuE')).toBe(false);
  });

  it('is false, without throwing, for values shorter or longer than the secret', () => {
    expect(secret.equals('s3cret')).toBe(false);
    expect(secret.equals('s3cret-value-and-more')).toBe(false);
  });

  it('is false for the empty string, and true only when the secret is itself empty', () => {
    expect(secret.equals('')).toBe(false);
    expect(new Secret('').equals('')).toBe(true);
    expect(new Secret('').equals('x')).toBe(false);
  });

  it('compares exactly: case and surrounding spaces count', () => {
    expect(secret.equals('S3CRET-VALUE')).toBe(false);
    expect(secret.equals(' s3cret-value')).toBe(false);
  });
});
