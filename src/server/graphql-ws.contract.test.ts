/**
 * What the WebSocket server relies on in graphql-ws beyond its typed API, pinned against the
 * installed version: a release that changes any of it fails here, not in live delivery.
 * Each test runs graphql-ws's own `useServer` on a real port with a probe in place of graphql-js's
 * `subscribe`, and a raw client that sees the wire as it is.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, type ExecutionArgs, type ExecutionResult } from 'graphql';
import { MessageType, stringifyMessage, type FormattedExecutionResult, type ServerOptions } from 'graphql-ws';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { onCleanup } from '../../test/helpers/cleanup.ts';
import { openRawSubscriber } from '../../test/helpers/raw-subscribers.ts';
import { messagePrefix, nextMessage, nextMessageTail } from './fanout/frames.ts';

const schema = buildSchema('type Query { hello: String } type Subscription { ticks: Int }');
const SUBSCRIBE = { query: 'subscription { ticks }' };
type Done = IteratorReturnResult<undefined>;
const DONE: Done = { done: true, value: undefined };

/** What a test keeps in graphql-ws's per-connection `extra`. */
type TestExtra = { connection: unknown };

/** graphql-ws's `useServer` on a free port; `keepAlive` as useServer takes it. Disposed after the test. */
async function startGraphqlWs(
  options: ServerOptions<Record<string, unknown> | undefined, Extra & Partial<TestExtra>>,
  keepAlive?: number,
): Promise<string> {
  const server = createServer();
  const wss = new WebSocketServer({ server, path: '/graphql' });
  const disposable = useServer<Record<string, unknown> | undefined, TestExtra>({ schema, ...options }, wss, keepAlive);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onCleanup(async () => {
    await disposable.dispose();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
}

/** An iterable standing in for a shared execution's member: each call recorded, each step settled by the test. */
function probe() {
  const calls: ('next' | 'return')[] = [];
  const step = { current: Promise.withResolvers<IteratorResult<ExecutionResult>>() };
  const nextCalled = Promise.withResolvers<void>();
  const returned = Promise.withResolvers<void>();
  const iterable: AsyncIterableIterator<ExecutionResult> = {
    next() {
      calls.push('next');
      step.current = Promise.withResolvers();
      nextCalled.resolve();
      return step.current.promise;
    },
    async return() {
      calls.push('return');
      step.current.resolve(DONE);
      returned.resolve();
      return DONE;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return { iterable, calls, step, nextCalled: nextCalled.promise, returned: returned.promise };
}

/** Resolves once the server has handled everything the client sent before (a protocol ping's pong). */
async function roundTrip(socket: WebSocket): Promise<void> {
  const pong = new Promise<void>((resolve) =>
    socket.on('message', (data) => {
      if (JSON.parse(data.toString()).type === 'pong') resolve();
    }),
  );
  socket.send(JSON.stringify({ type: 'ping' }));
  await pong;
}

describe('graphql-ws, as the WebSocket server relies on it', () => {
  it('keeps what onConnect put in extra for the context callback, and runs subscribe and onNext with the contextValue it built', async () => {
    const seen: { subscribe?: unknown; onNext?: unknown } = {};
    const built = { operation: 'mine' };
    const url = await startGraphqlWs({
      onConnect: (ctx) => void (ctx.extra.connection = 'kept'),
      context: (ctx) => (ctx.extra.connection === 'kept' ? built : undefined),
      subscribe: async (args: ExecutionArgs) => {
        seen.subscribe = args.contextValue;
        return (async function* () {
          yield { data: { ticks: 1 } };
        })();
      },
      onNext: (_ctx, _id, _payload, args) => void (seen.onNext = args.contextValue),
    });
    const client = await openRawSubscriber(url, SUBSCRIBE);
    await client.arrived('complete');
    expect(seen.subscribe).toBe(built);
    expect(seen.onNext).toBe(built);
  });

  it('holds one pending next() while the operation runs, and returns the iterable when the client completes it', async () => {
    const member = probe();
    const url = await startGraphqlWs({ subscribe: async () => member.iterable });
    const client = await openRawSubscriber(url, SUBSCRIBE);
    await member.nextCalled;
    await roundTrip(client.socket);
    expect(member.calls).toEqual(['next']);
    client.socket.send(JSON.stringify({ id: client.id, type: 'complete' }));
    await member.returned;
    await roundTrip(client.socket);
    expect(member.calls).toEqual(['next', 'return']);
    // The client completed it: graphql-ws sends nothing back (the pongs answer the round trips).
    expect(client.messages.filter((message) => message.type !== 'pong')).toEqual([]);
  });

  it('returns the iterable when the socket closes', async () => {
    const member = probe();
    const url = await startGraphqlWs({ subscribe: async () => member.iterable });
    const client = await openRawSubscriber(url, SUBSCRIBE);
    await member.nextCalled;
    client.socket.close();
    await member.returned;
    expect(member.calls).toEqual(['next', 'return']);
  });

  it('returns, without pulling, an iterable whose client completed it while subscribe was running', async () => {
    const member = probe();
    const subscribing = Promise.withResolvers<void>();
    const release = Promise.withResolvers<void>();
    const url = await startGraphqlWs({
      subscribe: async () => {
        subscribing.resolve();
        await release.promise;
        return member.iterable;
      },
    });
    const client = await openRawSubscriber(url, SUBSCRIBE);
    await subscribing.promise;
    client.socket.send(JSON.stringify({ id: client.id, type: 'complete' }));
    await roundTrip(client.socket);
    release.resolve();
    await member.returned;
    expect(member.calls).toEqual(['return']);
  });

  it('sends complete once the pending next() is done, after the messages written to the socket before it', async () => {
    const member = probe();
    let socket: WebSocket | undefined;
    const url = await startGraphqlWs({
      onConnect: (ctx) => void (socket = ctx.extra.socket),
      subscribe: async () => member.iterable,
    });
    const client = await openRawSubscriber(url, SUBSCRIBE);
    await member.nextCalled;
    socket!.send(nextMessage(messagePrefix(client.id), nextMessageTail({ data: { ticks: 1 } })), { binary: false });
    member.step.current.resolve(DONE);
    await client.arrived('complete');
    expect(client.messages).toEqual([
      { id: client.id, type: 'next', payload: { data: { ticks: 1 } } },
      { id: client.id, type: 'complete' },
    ]);
  });

  it('sends what onError makes of the error a pending next() rejects with', async () => {
    const member = probe();
    const thrown: string[] = [];
    const url = await startGraphqlWs({
      subscribe: async () => member.iterable,
      onError: (_ctx, _id, _payload, errors) => {
        thrown.push(...errors.map((error) => error.message));
        return [{ message: 'masked', extensions: { code: 'INTERNAL_SERVER_ERROR' } }];
      },
    });
    const client = await openRawSubscriber(url, SUBSCRIBE);
    await member.nextCalled;
    member.step.current.reject(new Error('the feed broke'));
    expect(await client.arrived('error')).toEqual({
      id: client.id,
      type: 'error',
      payload: [{ message: 'masked', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    });
    expect(thrown).toEqual(['the feed broke']);
  });

  it('sends for a result the same bytes as frames.ts writes for a shared one, awkward ids included', async () => {
    const payload: FormattedExecutionResult = {
      data: { ticks: null },
      errors: [{ message: 'Internal server error.', path: ['ticks'], extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
    };
    const url = await startGraphqlWs({
      subscribe: async () =>
        (async function* () {
          yield { data: { ticks: 1 } };
        })(),
      onNext: () => payload,
    });
    for (const id of ['1', 'a "quoted" id', 'é\u2028\\', '{"id":"x"}']) {
      const client = await openRawSubscriber(url, { ...SUBSCRIBE, id });
      const raw = new Promise<string>((resolve) => client.socket.on('message', (data) => resolve(data.toString())));
      const sent = await raw;
      expect(sent).toBe(stringifyMessage({ id, type: MessageType.Next, payload }));
      expect(sent).toBe(nextMessage(messagePrefix(id), nextMessageTail(payload)).toString());
    }
  });
});

describe("graphql-ws's keep-alive, as useServer's third argument", () => {
  /**
   * Advances fake time by `ms` on a connected client that answers no ping, then a round trip:
   * whether the server pinged it meanwhile, and whether the socket is still open.
   */
  async function pingedWithin(keepAlive: number, ms: number) {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    onCleanup(() => void vi.useRealTimers());
    const url = await startGraphqlWs({}, keepAlive);
    const client = await openRawSubscriber(url, { query: '{ hello }' }, { autoPong: false });
    let pinged = false;
    client.socket.on('ping', () => (pinged = true));
    await vi.advanceTimersByTimeAsync(ms);
    if (client.socket.readyState === WebSocket.OPEN) await roundTrip(client.socket);
    return { pinged, open: client.socket.readyState === WebSocket.OPEN };
  }

  it('pings at the interval given (the method below sees pings)', async () => {
    expect(await pingedWithin(12_000, 12_000)).toEqual({ pinged: true, open: true });
  });

  it('pings nothing and cuts nothing with 0: the server runs its own keep-alive', async () => {
    expect(await pingedWithin(0, 10 * 24_000)).toEqual({ pinged: false, open: true });
  });
});
