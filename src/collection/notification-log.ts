import type { Link } from '@opentelemetry/api';
import type { CollectionNotificationRecord } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { PubSub } from '../pubsub/types.ts';
import type { NotificationStore } from '../store/types.ts';
import { linkToActiveSpan, tracePublish } from '../telemetry/webhook.ts';

/** How often a replica reads the log unwoken: the most a lost pub/sub message delays live delivery. */
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** Notifications per read; a read goes on page by page until one comes back short. */
const DEFAULT_PAGE_SIZE = 500;
/** Deliveries a publish span links to at most; one busy turn can hold thousands. */
const MAX_PUBLISH_LINKS = 128;

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
  /**
   * Says that this replica committed notifications up to `seq`: wakes this replica's reader at once
   * and, once per event-loop turn whatever the number of commits in it, every replica's through
   * pub/sub. Never fails: a lost message only leaves the others to their safety-net timer.
   */
  announce(seq: number): void;
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
  const announcer = createAnnouncer(deps);
  const unsubscribe = await deps.pubsub.subscribe('notificationsStored', (message) => {
    // Only a hint: the store says what is new. Anything but a position asks for a read.
    if (typeof message.seq === 'number') reader.reached(message.seq);
    else reader.wake('wake');
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
    announce(seq) {
      reader.reached(seq);
      if (!closing) announcer.announce(seq);
    },
    settled: reader.settled,
    close: () =>
      (closing ??= (async () => {
        clearInterval(timer);
        stopWatching();
        // The last turn's commits still reach the other replicas.
        await announcer.flush();
        await unsubscribe().catch((error: unknown) => deps.logger.debug({ err: error }, 'log follower unsubscribe failed'));
        await reader.close();
      })()),
  };
}

/**
 * The publishing half: positions announced in one event-loop turn (every commit of a busy webhook)
 * go out as one `notificationsStored` message with the highest of them.
 */
function createAnnouncer({ pubsub, logger }: NotificationLogDeps) {
  let highest = 0;
  let links: Link[] = [];
  let sending: Promise<void> | undefined;

  async function send() {
    const seq = highest;
    const linked = links;
    links = [];
    try {
      await tracePublish(pubsub.kind, 'notificationsStored', () => pubsub.publish('notificationsStored', { seq }), linked);
    } catch (error) {
      logger.error({ err: error, seq }, 'stored notifications could not be announced; other replicas will read them on their next tick');
    }
  }

  return {
    announce(seq: number) {
      highest = Math.max(highest, seq);
      const link = linkToActiveSpan();
      if (link && links.length < MAX_PUBLISH_LINKS) links.push(link);
      sending ??= new Promise<void>((resolve) => setImmediate(resolve)).then(send).finally(() => (sending = undefined));
    },
    async flush() {
      while (sending) await sending;
    },
  };
}

/** The seq of the newest stored notification, or 0 when there is none (seq starts at 1). */
async function newestSeq(store: NotificationStore): Promise<number> {
  const [newest] = await store.listNewestFirst({ limit: 1 });
  return newest?.seq ?? 0;
}

/** The local listeners; one that throws never keeps a notification from the others. */
function createListeners(logger: Logger) {
  const listeners = new Set<LogListener>();
  return {
    get size() {
      return listeners.size;
    },
    add: (listener: LogListener) => void listeners.add(listener),
    remove: (listener: LogListener) => void listeners.delete(listener),
    clear: () => listeners.clear(),
    handOut(notification: CollectionNotificationRecord) {
      for (const listener of [...listeners]) {
        try {
          listener(notification);
        } catch (error) {
          logger.error({ err: error }, 'log listener threw; the others still get the notification');
        }
      }
    },
  };
}

/**
 * Runs `work` one call at a time: a request while one runs schedules exactly one more run after it,
 * however many requests arrive. `work` must not throw.
 */
function coalesce(work: (trigger: ReadTrigger) => Promise<void>) {
  let running: Promise<void> | undefined;
  let again: ReadTrigger | undefined;
  const loop = async (first: ReadTrigger) => {
    for (let trigger: ReadTrigger | undefined = first; trigger; trigger = again) {
      again = undefined;
      await work(trigger);
    }
    running = undefined;
  };
  return {
    request(trigger: ReadTrigger) {
      if (running) again ??= trigger;
      else running = loop(trigger);
    },
    async settled() {
      while (running) await running;
    },
  };
}

/** The reading half: the position, the listeners, and reads coalesced so that one at most runs. */
function createLogReader(deps: NotificationLogDeps, start: number, pageSize: number) {
  const { store, metrics, logger } = deps;
  const listeners = createListeners(logger);
  let position = start;
  let failing = false;
  let closed = false;
  metrics.logPosition.set(position);

  async function readUntilCaughtUp(trigger: ReadTrigger) {
    for (;;) {
      const page = await store.listAfter({ afterSeq: position, limit: pageSize });
      metrics.logReads.inc({ trigger, outcome: 'ok' });
      for (const notification of page) {
        // Cheap guard: a page never overlaps the position, but nothing is ever handed out twice.
        if (notification.seq <= position) continue;
        position = notification.seq;
        listeners.handOut(notification);
      }
      metrics.logPosition.set(position);
      if (page.length < pageSize || closed) return;
    }
  }

  const reads = coalesce(async (trigger) => {
    if (closed) return;
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
  });

  return {
    get position() {
      return position;
    },
    follow(listener: LogListener): LogFollowing {
      listeners.add(listener);
      return { position, stop: () => listeners.remove(listener) };
    },
    wake(trigger: ReadTrigger) {
      if (!closed) reads.request(trigger);
    },
    /**
     * A commit reached `seq`. Seq order is commit order, so nothing at or below it can appear later:
     * with nobody listening the position moves there without reading a row.
     */
    reached(seq: number) {
      if (closed || seq <= position) return;
      if (listeners.size > 0) return reads.request('wake');
      position = seq;
      metrics.logPosition.set(position);
    },
    settled: () => reads.settled(),
    async close() {
      closed = true;
      await reads.settled();
      listeners.clear();
    },
  };
}
