import { onTestFinished } from 'vitest';

/**
 * Registers something the current test started (a server, a store, a temp directory) for closing
 * when the test finishes, pass or fail. Callbacks run newest first, so a store closes before its
 * database is dropped; a callback that throws fails the test, and the others still run.
 * Call it inside a test or a beforeEach; vitest refuses it at file or describe scope.
 */
export function onCleanup(close: () => unknown): void {
  onTestFinished(async () => {
    await close();
  });
}
