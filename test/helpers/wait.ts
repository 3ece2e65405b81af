/**
 * Polls `check` until it returns something other than undefined (or stops throwing), or fails
 * after `expireMs` with the last error. For conditions with no event to wait on (a port closing).
 */
export async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, expireMs = 5_000): Promise<T> {
  const deadline = Date.now() + expireMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`waitFor expired after ${expireMs} ms${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
