import { describe, expect, it } from 'vitest';
import { ANONYMOUS, UNCHECKED, type Caller } from '../auth/caller.ts';
import {
  callbackCallerOf,
  createCallbackSubscriptionLimits,
  MAX_CALLBACK_SUBSCRIPTIONS,
  MAX_CALLBACK_SUBSCRIPTIONS_PER_CALLER,
  type CallbackPlace,
} from './callback-subscriptions.ts';

/** A verified caller with `subject` (none when undefined) and these scopes. */
function verified(subject: string | undefined, scopes = ['collections:read']): Caller {
  return {
    kind: 'verified',
    scopes: new Set(scopes),
    accounts: ['0123456789'],
    subject,
    lifetime: { acceptedUntil: Date.now() + 60_000, onKeyWithdrawn: () => () => undefined },
  };
}

describe('callback subscription places', () => {
  it("counts a token's sub as the caller; tokens without one by what they grant; every caller as one when authorization is off", () => {
    expect(callbackCallerOf(verified('ada'))).toBe(callbackCallerOf(verified('ada', ['collections:read:all'])));
    expect(callbackCallerOf(verified('ada'))).not.toBe(callbackCallerOf(verified('grace')));
    expect(callbackCallerOf(verified(undefined))).toBe(callbackCallerOf(verified(undefined)));
    expect(callbackCallerOf(verified(undefined))).not.toBe(callbackCallerOf(verified(undefined, ['collections:read:all'])));
    expect(callbackCallerOf(UNCHECKED)).toBe(callbackCallerOf(UNCHECKED));
    expect(callbackCallerOf(UNCHECKED)).not.toBe(callbackCallerOf(ANONYMOUS));
  });

  it('holds at most 10,000 in all, refusing the next with a clear error until one is given back', () => {
    const counts: number[] = [];
    const limits = createCallbackSubscriptionLimits((held) => counts.push(held));
    const places: CallbackPlace[] = [];
    const callers = MAX_CALLBACK_SUBSCRIPTIONS / MAX_CALLBACK_SUBSCRIPTIONS_PER_CALLER;
    for (let c = 0; c < callers; c += 1) {
      for (let i = 0; i < MAX_CALLBACK_SUBSCRIPTIONS_PER_CALLER; i += 1)
        places.push(limits.admit(verified(`caller-${c}`)) as CallbackPlace);
    }
    expect(counts.at(-1)).toBe(10_000);
    const refused = limits.admit(verified('newcomer'));
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain('this replica already holds 10000 callback subscriptions');

    places[0]!.release();
    places[0]!.release();
    expect(counts.at(-1)).toBe(9_999);
    expect(limits.admit(verified('newcomer'))).not.toBeInstanceOf(Error);
    expect(limits.admit(verified('newcomer'))).toBeInstanceOf(Error);
  });

  it('gives a place back when its stream ends, however it ends', async () => {
    let held = 0;
    const limits = createCallbackSubscriptionLimits((count) => (held = count));
    async function* events() {
      yield 1;
      throw new Error('the store went away');
    }
    const failing = (limits.admit(UNCHECKED) as CallbackPlace).hold(events());
    const returned = (limits.admit(UNCHECKED) as CallbackPlace).hold(events());
    const finished = (limits.admit(UNCHECKED) as CallbackPlace).hold((async function* () {})());
    expect(held).toBe(3);
    expect(await failing.next()).toEqual({ done: false, value: 1 });
    await expect(failing.next()).rejects.toThrow('the store went away');
    await returned.return!();
    expect(await finished.next()).toEqual({ done: true, value: undefined });
    expect(held).toBe(0);
  });
});
