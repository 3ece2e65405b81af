import { describe, expect, it } from 'vitest';
import { createRetrier, type RetriedCall } from './resilience.ts';

const READ: RetriedCall = { area: 'account', operation: 'lookupAccount', idempotent: true };
const transient = new Error('503');
const isTransient = (error: unknown) => error === transient;

/** An attempt that fails with `failures` in order, then answers 'ok'; counts its calls. */
function scripted(...failures: unknown[]) {
  const seen: number[] = [];
  return {
    seen,
    attempt: async (remainingMs: number) => {
      seen.push(remainingMs);
      if (seen.length <= failures.length) throw failures[seen.length - 1];
      return 'ok';
    },
  };
}

// No waiting in these tests: the jitter draws 0.
const instant = { random: () => 0 };

describe('createRetrier', () => {
  it('retries a transient failure of a read and answers', async () => {
    const retries: number[] = [];
    const retrier = createRetrier({ timeoutMs: 1_000, ...instant, onRetry: (_call, event) => retries.push(event.attempt) });
    const { attempt, seen } = scripted(transient);
    await expect(retrier.run(READ, attempt, isTransient)).resolves.toBe('ok');
    expect(seen).toHaveLength(2);
    // Whole milliseconds, as AbortSignal.timeout and undici require.
    expect(seen.every(Number.isInteger)).toBe(true);
    expect(retries).toEqual([2]);
  });

  it('sends a call that may change state once, whatever the failure', async () => {
    const retrier = createRetrier({ timeoutMs: 1_000, ...instant });
    const { attempt, seen } = scripted(transient);
    await expect(retrier.run({ ...READ, idempotent: false }, attempt, isTransient)).rejects.toBe(transient);
    expect(seen).toHaveLength(1);
  });

  it('does not retry what is not transient (a refusal, a time-out of the whole budget)', async () => {
    const retrier = createRetrier({ timeoutMs: 1_000, ...instant });
    const refusal = new Error('401');
    const { attempt, seen } = scripted(refusal);
    await expect(retrier.run(READ, attempt, isTransient)).rejects.toBe(refusal);
    expect(seen).toHaveLength(1);
  });

  it('stops after maxAttempts and throws the last failure', async () => {
    const gaveUp: string[] = [];
    const retrier = createRetrier({ timeoutMs: 1_000, ...instant, onGiveUp: (_call, reason) => gaveUp.push(reason) });
    const { attempt, seen } = scripted(transient, transient, transient, transient);
    await expect(retrier.run(READ, attempt, isTransient)).rejects.toBe(transient);
    expect(seen).toHaveLength(3);
    expect(gaveUp).toEqual(['attempts']);
  });

  it('gives each attempt what is left of the one budget, and starts no retry that could not finish in it', async () => {
    let clock = 0;
    const gaveUp: string[] = [];
    const retrier = createRetrier({
      timeoutMs: 1_000,
      now: () => clock,
      random: () => 0,
      onGiveUp: (_call, reason) => gaveUp.push(reason),
    });
    const seen: number[] = [];
    const attempt = async (remainingMs: number) => {
      seen.push(remainingMs);
      clock += 400; // each failed attempt takes 400 ms of the 1,000
      throw transient;
    };
    await expect(retrier.run(READ, attempt, isTransient)).rejects.toBe(transient);
    // 1,000 left, then 600; after 800 ms only 200 (< 25 %) would be left: no third attempt.
    expect(seen).toEqual([1_000, 600]);
    expect(gaveUp).toEqual(['deadline']);
  });

  it('keeps retries of an area to a small share of its recent calls: 20 failing reads make at most 24 attempts', async () => {
    const decisions: string[] = [];
    const retrier = createRetrier({
      timeoutMs: 1_000,
      ...instant,
      onRetry: () => decisions.push('retried'),
      onGiveUp: (_call, reason) => decisions.push(reason),
    });
    let attempts = 0;
    const failing = async () => {
      attempts += 1;
      throw transient;
    };
    for (let i = 0; i < 20; i += 1) await retrier.run(READ, failing, isTransient).catch(() => undefined);
    // A floor of 3 retries, then 20 % of the 20 calls in the window.
    expect(attempts).toBe(24);
    expect(decisions.filter((d) => d === 'retried')).toHaveLength(4);
    expect(decisions).toContain('budget');

    // Another area has its own budget.
    await expect(retrier.run({ ...READ, area: 'billing' }, scripted(transient).attempt, isTransient)).resolves.toBe('ok');
  });

  it('frees the budget as the window moves on', async () => {
    let clock = 0;
    const retrier = createRetrier({ timeoutMs: 1_000, now: () => clock, random: () => 0 });
    // The floor's three retries, spent by two calls; a third call's retry is refused.
    const spent = [scripted(transient, transient, transient), scripted(transient, transient), scripted(transient)];
    for (const { attempt } of spent) await expect(retrier.run(READ, attempt, isTransient)).rejects.toBe(transient);
    expect(spent.map(({ seen }) => seen.length)).toEqual([3, 2, 1]);
    clock += 10_000;
    const later = scripted(transient);
    await expect(retrier.run(READ, later.attempt, isTransient)).resolves.toBe('ok');
  });
});
