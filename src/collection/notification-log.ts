import type { CollectionNotificationRecord } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';

/** How often a replica reads the log unwoken: the most a lost pub/sub message delays live delivery. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** Notifications per read; a read goes on page by page until one comes back short. */
const DEFAULT_PAGE_SIZE = 500;

/** Why a read ran: a pub/sub wake-up (or loss of the link), or the safety-net timer. */
export type ReadTrigger = 'wake' | 'timer';

export type LogListener = (notification: CollectionNotificationRecord) => void;

/** One listener's place on the log: it gets every notification after `position`, until `stop()`. */
export interface LogFollowing {
  readonly position: number;
  stop(): void;
}

/**
 * This replica's follower of the store's log of notifications. It reads by position (seq) and hands
 * each new notification to every local listener, in position order, once; one read serves them all.
 */
export interface NotificationLog {
  /** The highest seq handed out so far (at start, the store's newest). */
  readonly position: number;
  /**
   * Registers `listener` from the current position, which is returned: it is handed exactly the
   * notifications after it. Synchronous, so nothing can be handed out between the two.
   */
  follow(listener: LogListener): LogFollowing;
  /** Asks for a read; a wake while one runs causes one more read after it, however many arrive. */
  wake(trigger: ReadTrigger): void;
  /** Resolves once no read is running or asked for. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export interface NotificationLogDeps {
  store: NotificationStore;
  pubsub: PubSub;
  metrics: Metrics;
  logger: Logger;
}

export interface NotificationLogOptions {
  pollIntervalMs?: number;
  pageSize?: number;
}

/**
 * Starts following the log from the store's newest notification: woken by every replica's
 * `incomingTransfer` messages (published after each commit) and by a timer, since pub/sub may
 * lose messages (Redis at most once). Positions are safe to follow because the store assigns seq
 * in commit order: nothing can later appear below a position already read.
 */
export async function startNotificationLog(deps: NotificationLogDeps, options: NotificationLogOptions = {}): Promise<NotificationLog> {
  const { pollIntervalMs = DEFAULT_POLL_INTERVAL_MS, pageSize = DEFAULT_PAGE_SIZE } = options;
  const reader = createLogReader(deps, await newestSeq(deps.store), pageSize);
  const unsubscribe = await deps.pubsub.subscribe('incomingTransfer', (message) => {
    // Only a hint: the store says what is new. A message already read past needs no read.
    const seq = (message as { seq?: unknown }).seq;
    if (typeof seq === 'number' && seq <= reader.position) return;
    reader.wake('wake');
  });
  // Messages may have been lost just before the link dropped: read at once, not at the next tick.
  const stopWatching = deps.pubsub.onInterruption(() => reader.wake('wake'));
  const timer = setInterval(() => reader.wake('timer'), pollIntervalMs);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    get position() {
      return reader.position;
    },
    follow: reader.follow,
    wake: reader.wake,
    settled: reader.settled,
    close: () =>
      (closing ??= (async () => {
        clearInterval(timer);
        stopWatching();
        await unsubscribe().catch((error: unknown) => deps.logger.debug({ err: error }, 'log follower unsubscribe failed'));
        await reader.close();
      })()),
  };
}

/** The seq of the newest stored notification, or 0 when there is none (seq starts at 1). */
async function newestSeq(store: NotificationStore): Promise<number> {
  const [newest] = await store.listNewestFirst({ limit: 1 });
  return newest?.seq ?? 0;
}

/** The reading half: position, listeners, and reads coalesced so that one at most is in flight. */
function createLogReader(deps: NotificationLogDeps, start: number, pageSize: number) {
  const { store, metrics, logger } = deps;
  let position = start;
  const listeners = new Set<LogListener>();
  let reading: Promise<void> | undefined;
  let again: ReadTrigger | undefined;
  let failing = false;
  let closed = false;
  metrics.logPosition.set(position);

  function handOut(notification: CollectionNotificationRecord) {
    // Cheap guard: a page never overlaps the position, but nothing is ever handed out twice.
    if (notification.seq <= position) return;
    position = notification.seq;
    for (const listener of [...listeners]) {
      try {
        listener(notification);
      } catch (error) {
        logger.error({ err: error }, 'log listener threw; the others still get the notification');
      }
    }
  }

  async function readUntilCaughtUp(trigger: ReadTrigger) {
    for (;;) {
      const page = await store.listAfter({ afterSeq: position, limit: pageSize });
      metrics.logReads.inc({ trigger, outcome: 'ok' });
      page.forEach(handOut);
      metrics.logPosition.set(position);
      if (page.length < pageSize || closed) return;
    }
  }

  async function run(first: ReadTrigger) {
    for (let trigger: ReadTrigger | undefined = first; trigger && !closed; trigger = again) {
      again = undefined;
      try {
        await readUntilCaughtUp(trigger);
        if (failing) logger.info({ position }, 'reading the notification log again');
        failing = false;
      } catch (error) {
        metrics.logReads.inc({ trigger, outcome: 'error' });
        // Once per outage, not once a second: the timer keeps retrying from the same position.
        if (!failing) logger.warn({ err: error, position }, 'could not read the notification log; retrying');
        failing = true;
      }
    }
    reading = undefined;
  }

  return {
    get position() {
      return position;
    },
    follow(listener: LogListener): LogFollowing {
      listeners.add(listener);
      return { position, stop: () => void listeners.delete(listener) };
    },
    wake(trigger: ReadTrigger) {
      if (closed) return;
      if (reading) again ??= trigger;
      else reading = run(trigger);
    },
    settled: async () => {
      while (reading) await reading;
    },
    async close() {
      closed = true;
      await reading;
      listeners.clear();
    },
  };
}
