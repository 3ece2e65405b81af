import { GraphQLError, type ExecutionResult } from 'graphql';
import { describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { WaitingCount } from '../../collection/subscriber-queue.ts';
import { SharedSubscription, type SharedSubscriptionHooks } from './shared-subscription.ts';
import type { Recipient, SocketWriter } from './socket-writer.ts';

/** A source the test pushes results into, recording whether it was returned. */
function controlledSource() {
  const queue: PromiseWithResolvers<IteratorResult<ExecutionResult>>[] = [Promise.withResolvers()];
  let returned = false;
  const source: AsyncIterator<ExecutionResult> = {
    next: () => queue[0]!.promise.then((step) => (queue.shift(), step)),
    return: async () => {
      returned = true;
      queue.at(-1)!.resolve({ done: true, value: undefined });
      return { done: true, value: undefined };
    },
  };
  const settle = (step: IteratorResult<ExecutionResult>) => {
    queue.push(Promise.withResolvers());
    queue.at(-2)!.resolve(step);
  };
  return {
    source,
    push: (result: ExecutionResult) => settle({ done: false, value: result }),
    finish: () => settle({ done: true, value: undefined }),
    fail: (error: Error) => {
      queue.push(Promise.withResolvers());
      queue.at(-2)!.reject(error);
    },
    returned: () => returned,
  };
}

/**
 * Hooks whose writer records each frame by socket name; with `hold`, frames wait (counted for their
 * member, as behind a backed-up socket) until `release()` writes them.
 */
function recordingHooks(options: { hold?: boolean } = {}) {
  const frames: { socket: string; frame: string }[] = [];
  const held: { recipient: Recipient; write: () => void }[] = [];
  let serialised = 0;
  let ended: string | undefined;
  const writer: SocketWriter = {
    recipient(socket, id) {
      const write = (tail: Buffer) => () =>
        void frames.push({ socket: (socket as unknown as { name: string }).name, frame: `{"id":${JSON.stringify(id)}${tail.toString()}` });
      const recipient: Recipient = {
        waiting: new WaitingCount({ inc: () => undefined, dec: () => undefined }, () => undefined),
        send(tail) {
          if (!options.hold) write(tail)();
          else {
            held.push({ recipient, write: write(tail) });
            recipient.waiting.add();
          }
          return true;
        },
        forget: () => recipient.waiting.clear(),
        onDrained: () => undefined,
      };
      return recipient;
    },
    connection: () => ({ tooFarBehind: () => undefined, onClosedBehind: () => () => undefined }),
    closeTooFarBehind: () => true,
  };
  const hooks: SharedSubscriptionHooks = {
    writer,
    serialise: (result) => {
      serialised += 1;
      return JSON.stringify(result);
    },
    onResult: () => undefined,
    onMembership: () => undefined,
    onEnded: ({ reason }) => {
      ended = reason;
    },
    onReturnError: () => undefined,
  };
  const release = () => {
    for (const { recipient, write } of held.splice(0)) {
      if (recipient.waiting.value === 0) continue; // forgotten
      recipient.waiting.remove();
      write();
      if (recipient.waiting.value === 0) recipient.onDrained();
    }
  };
  return { hooks, frames, serialised: () => serialised, ended: () => ended, release };
}

const socket = (name: string) => ({ name }) as unknown as WebSocket;
const settleEvents = () => new Promise((resolve) => setImmediate(resolve));
const result = (n: number): ExecutionResult => ({ data: { n } });

describe('SharedSubscription', () => {
  it('serialises each result once and writes a graphql-transport-ws next frame per member', async () => {
    const { source, push } = controlledSource();
    const { hooks, frames, serialised } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join({ socket: socket('a'), id: 'one' })!;
    const b = execution.join({ socket: socket('b'), id: 'two"quoted' })!;
    void a.next();
    void b.next();
    push(result(1));
    await settleEvents();
    expect(serialised()).toBe(1);
    expect(frames).toEqual([
      { socket: 'a', frame: '{"id":"one","type":"next","payload":{"data":{"n":1}}}' },
      { socket: 'b', frame: '{"id":"two\\"quoted","type":"next","payload":{"data":{"n":1}}}' },
    ]);
    expect(frames.map((f) => JSON.parse(f.frame).id)).toEqual(['one', 'two"quoted']);
  });

  it('writes nothing to a member graphql-ws has not started iterating', async () => {
    const { source, push } = controlledSource();
    const { hooks, frames } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    void execution.join({ socket: socket('a'), id: '1' })!.next();
    const late = execution.join({ socket: socket('late'), id: '1' })!;
    push(result(1));
    await settleEvents();
    void late.next();
    push(result(2));
    await settleEvents();
    expect(frames.map((f) => `${f.socket}:${JSON.parse(f.frame).payload.data.n}`)).toEqual(['a:1', 'a:2', 'late:2']);
  });

  it('keeps the others when one member leaves, and returns the source when the last one does', async () => {
    const { source, push, returned } = controlledSource();
    const { hooks, frames, ended } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join({ socket: socket('a'), id: '1' })!;
    const b = execution.join({ socket: socket('b'), id: '1' })!;
    const aDone = a.next();
    void b.next();
    await a.return!();
    expect(await aDone).toEqual({ done: true, value: undefined });
    push(result(1));
    await settleEvents();
    expect(frames.map((f) => f.socket)).toEqual(['b']);
    expect(returned()).toBe(false);
    await b.return!();
    expect(returned()).toBe(true);
    expect(ended()).toBe('left');
    expect(execution.join({ socket: socket('c'), id: '1' })).toBeUndefined();
  });

  it('completes every member when the source completes', async () => {
    const { source, finish } = controlledSource();
    const { hooks, ended } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join({ socket: socket('a'), id: '1' })!;
    const b = execution.join({ socket: socket('b'), id: '1' })!;
    const steps = [a.next(), b.next()];
    finish();
    expect(await Promise.all(steps)).toEqual([
      { done: true, value: undefined },
      { done: true, value: undefined },
    ]);
    expect(ended()).toBe('completed');
  });

  it('rejects every member with what the source threw, so graphql-ws sends each an error message', async () => {
    const { source, fail } = controlledSource();
    const { hooks, ended } = recordingHooks();
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join({ socket: socket('a'), id: '1' })!;
    const b = execution.join({ socket: socket('b'), id: '1' })!;
    const steps = [a.next(), b.next()];
    const failure = new GraphQLError('the feed broke');
    fail(failure);
    const outcomes = await Promise.allSettled(steps);
    expect(outcomes).toEqual([
      { status: 'rejected', reason: failure },
      { status: 'rejected', reason: failure },
    ]);
    expect(await a.next()).toEqual({ done: true, value: undefined });
    expect(ended()).toBe('failed');
  });

  it("completes a member only after the frames that waited for its socket are written, so `complete` follows its last `next`", async () => {
    const { source, push, finish } = controlledSource();
    const { hooks, frames, release } = recordingHooks({ hold: true });
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join({ socket: socket('a'), id: '1' })!;
    let completed = false;
    const step = a.next().then((value) => ((completed = true), value));
    push(result(1));
    push(result(2));
    finish();
    await settleEvents();
    expect(completed).toBe(false);
    release();
    expect(await step).toEqual({ done: true, value: undefined });
    expect(frames.map((f) => JSON.parse(f.frame).payload.data.n)).toEqual([1, 2]);
  });

  it('drops what waited for a member that leaves, and completes it at once', async () => {
    const { source, push } = controlledSource();
    const { hooks, frames, release } = recordingHooks({ hold: true });
    const execution = new SharedSubscription(source, hooks);
    const a = execution.join({ socket: socket('a'), id: '1' })!;
    const step = a.next();
    push(result(1));
    await settleEvents();
    await a.return!();
    expect(await step).toEqual({ done: true, value: undefined });
    release();
    expect(frames).toEqual([]);
  });
});
