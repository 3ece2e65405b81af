import { describe, expect, it } from 'vitest';
import { logFlushTimeout, SHUTDOWN_BUDGET_MS, SHUTDOWN_DEADLINES, TRACING_FLUSH_MS, tracingFlushTimeout } from './shutdown.ts';

describe('the shutdown budget', () => {
  it("is the contract's 10 seconds, with every stage's deadline inside it and in order", () => {
    const { connectionsMs, tracingFlushMs, logFlushMs, exitMs } = SHUTDOWN_DEADLINES;
    expect(SHUTDOWN_BUDGET_MS).toBe(10_000);
    expect(0).toBeLessThan(connectionsMs);
    // The flush keeps its whole share after the connections are cut, and ends before the log's, which ends before the forced exit.
    expect(connectionsMs + TRACING_FLUSH_MS).toBeLessThanOrEqual(tracingFlushMs);
    expect(tracingFlushMs).toBeLessThan(logFlushMs);
    expect(logFlushMs).toBeLessThan(exitMs);
    expect(exitMs).toBeLessThan(SHUTDOWN_BUDGET_MS);
  });

  it('gives the tracing flush its share, less whatever it would take past its deadline', () => {
    expect(tracingFlushTimeout(0)).toBe(TRACING_FLUSH_MS);
    expect(tracingFlushTimeout(SHUTDOWN_DEADLINES.connectionsMs)).toBe(TRACING_FLUSH_MS);
    expect(tracingFlushTimeout(SHUTDOWN_DEADLINES.tracingFlushMs - 300)).toBe(300);
    expect(tracingFlushTimeout(SHUTDOWN_DEADLINES.exitMs)).toBe(0);
  });

  it('bounds the last log lines by their own deadline, whenever their flush starts', () => {
    expect(logFlushTimeout(0)).toBe(SHUTDOWN_DEADLINES.logFlushMs);
    expect(logFlushTimeout(SHUTDOWN_DEADLINES.tracingFlushMs)).toBe(SHUTDOWN_DEADLINES.logFlushMs - SHUTDOWN_DEADLINES.tracingFlushMs);
    expect(logFlushTimeout(SHUTDOWN_DEADLINES.exitMs)).toBe(0);
  });
});
