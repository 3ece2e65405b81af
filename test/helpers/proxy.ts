/**
 * A store or pub/sub with one behaviour under the test's control, handed to the app through
 * `createApp` overrides: one method replaced, or its calls held at a gate.
 */

/** `target` with `property` replaced by `value`, every other method bound to the real thing. */
export function withMethod<T extends object, K extends keyof T>(target: T, property: K, value: T[K]): T {
  return new Proxy(target, {
    get(object, key) {
      if (key === property) return value;
      const member = Reflect.get(object, key, object);
      return typeof member === 'function' ? member.bind(object) : member;
    },
  });
}

type Method<T> = { [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never }[keyof T];

export interface HeldCalls<T> {
  /** The target whose calls of the method wait at the gate. */
  target: T;
  /** Resolves when the first call reaches the gate. */
  reached: Promise<void>;
  /** Opens the gate: every call waiting, and every later one, goes through to the real method. */
  release(): void;
}

/**
 * `target` whose calls of `method` wait until `release()`, then run the real thing: a write in
 * flight for as long as the test needs (while the server drains, say).
 */
export function holdCalls<T extends object, K extends Method<T>>(target: T, method: K): HeldCalls<T> {
  const reached = Promise.withResolvers<void>();
  const gate = Promise.withResolvers<void>();
  const real = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  const held = async (...args: unknown[]) => {
    reached.resolve();
    await gate.promise;
    return real(...args);
  };
  return { target: withMethod(target, method, held as T[K]), reached: reached.promise, release: () => gate.resolve() };
}
