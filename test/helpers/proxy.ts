/**
 * `target` with one property replaced and every other method bound to it: a store or pub/sub
 * with one behaviour under the test's control, handed to the app through `createApp` overrides.
 */
export function withMethod<T extends object>(target: T, property: PropertyKey, value: unknown): T {
  return new Proxy(target, {
    get(object, key) {
      if (key === property) return value;
      const member = Reflect.get(object, key, object);
      return typeof member === 'function' ? member.bind(object) : member;
    },
  });
}
