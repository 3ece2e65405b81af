import { describe, expect, it } from 'vitest';
import { withinDeadline } from './deadline.ts';

/** Timers that keep the process alive (unref'd ones are not listed). */
const liveTimers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;

describe('withinDeadline', () => {
  it('answers what the work settles to before the deadline, and clears its timer', async () => {
    const before = liveTimers();
    const answer = Promise.withResolvers<string>();
    const waited = withinDeadline(answer.promise, 60_000, 'late');
    expect(liveTimers()).toBe(before + 1);
    answer.resolve('ok');
    await expect(waited).resolves.toBe('ok');
    expect(liveTimers()).toBe(before);
  });

  it('passes on a rejection that comes before the deadline, and clears its timer', async () => {
    const before = liveTimers();
    await expect(withinDeadline(Promise.reject(new Error('store down')), 60_000, 'late')).rejects.toThrow('store down');
    expect(liveTimers()).toBe(before);
  });

  // No timer count here: the wait spans a timer phase, in which timers of the worker's earlier files
  // (files share a worker) fire or start; and the deadline's own timer has fired by then anyway.
  it('answers the stand-in once the deadline passes, however long the work takes', async () => {
    const started = performance.now();
    await expect(withinDeadline(new Promise<string>(() => undefined), 50, 'late')).resolves.toBe('late');
    const tookMs = performance.now() - started;
    expect(tookMs).toBeGreaterThanOrEqual(49);
    expect(tookMs).toBeLessThan(5_000);
  });

  it('drops a rejection the work meets after the deadline', async () => {
    const answer = Promise.withResolvers<string>();
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      await expect(withinDeadline(answer.promise, 10, 'late')).resolves.toBe('late');
      answer.reject(new Error('too late'));
      // Unhandled rejections are reported after the microtasks of this turn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
