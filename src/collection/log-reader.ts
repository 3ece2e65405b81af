// The reading half of a follower of one of the store's logs (the notifications', or the log of
// confirmations): it reads the settled log by position and hands each new entry to every local
// listener, in position order, once; one read serves them all. What it hands out is always read from
// its own store: pub/sub messages, commits and timers only ask it to read.
import { comparePositions, type LogPosition } from '../domain/index.ts';
import type { Logger } from '../logger.ts';
import { Listeners } from '../pubsub/listeners.ts';
import { createShortfall, DEFAULT_HELD_BACK_WARNING_MS } from './feed-shortfall.ts';

/** Entries per read; a read goes on page by page until one comes back short. */
const PAGE_SIZE = 500;

/**
 * Why a read ran: a wake-up (another replica's message, this replica's commit, or the loss of the
 * pub/sub link), the safety-net timer, or a retry of a read that stopped short of a position known
 * to be committed (not settled yet).
 */
export type ReadTrigger = 'wake' | 'timer' | 'retry';

/** One listener's place on the log: it gets every entry after `position`, until `stop()`. */
export interface FeedFollowing {
  readonly position: LogPosition;
  stop(): void;
}

/** A follower of one of the store's logs that listeners join. */
export interface LogFollower<Entry> {
  /** The position of the last entry handed out or passed. */
  readonly position: LogPosition;
  /**
   * Registers `listener` from the current position, which is returned: it is handed exactly the
   * entries after it. Synchronous, so nothing can be handed out between the two.
   */
  follow(listener: (entry: Entry) => void): FeedFollowing;
}

/** One of the store's logs, as a reader reads it (the store's settled-log rules: NotificationStore). */
export interface LogSource<Entry> {
  /** Settled entries after `after`, oldest first, at most `limit`. */
  listAfter(after: LogPosition, limit: number): Promise<Entry[]>;
  settledHead(): Promise<LogPosition>;
  committedHead(): Promise<LogPosition>;
  /** An entry's position in this log. */
  positionOf(entry: Entry): LogPosition;
}

export interface LogReaderOptions {
  /** Names the log in log lines: "notification", "confirmation". */
  what: string;
  pollIntervalMs: number;
  /** Told of every position the reader moves to. */
  onPosition?: ((position: LogPosition) => void) | undefined;
  /** Told of every read, by trigger and outcome. */
  onRead?: ((trigger: ReadTrigger, outcome: 'ok' | 'error') => void) | undefined;
}

/**
 * A log's reader, a small state machine: `idle`, or `reading` (with at most one more read asked for
 * meanwhile, however many requests arrive), or `closed`. It holds the position and the listeners.
 * With nobody to hand entries to, a read only moves it to the settled head.
 */
export function createLogReader<Entry>(source: LogSource<Entry>, start: LogPosition, logger: Logger, options: LogReaderOptions) {
  const { what } = options;
  const listeners = new Listeners<Entry>(logger, `${what} feed`);
  const advanced = new Listeners<undefined>(logger, `${what} feed advance`);
  const shortfall = createShortfall(
    logger,
    { pollIntervalMs: options.pollIntervalMs, heldBackWarningMs: DEFAULT_HELD_BACK_WARNING_MS, what },
    () => request('retry'),
  );
  let state: { kind: 'idle' } | { kind: 'reading'; again: ReadTrigger | undefined; done: Promise<void> } | { kind: 'closed' } = {
    kind: 'idle',
  };
  let position = start;
  let failing = false;
  options.onPosition?.(position);

  const moveTo = (next: LogPosition) => {
    if (comparePositions(next, position) <= 0) return;
    position = next;
    options.onPosition?.(next);
  };
  const counted = async <T>(trigger: ReadTrigger, read: () => Promise<T>): Promise<T> => {
    const result = await read();
    options.onRead?.(trigger, 'ok');
    return result;
  };

  async function readOnce(trigger: ReadTrigger): Promise<void> {
    if (listeners.size === 0) {
      const head = await counted(trigger, () => source.settledHead());
      // Whoever follows meanwhile is owed what lies after the position it was given: read for it.
      if (listeners.size === 0) return moveTo(head);
    }
    for (;;) {
      const page = await counted(trigger, () => source.listAfter(position, PAGE_SIZE));
      for (const entry of page) {
        const at = source.positionOf(entry);
        // A page never overlaps the position; the guard makes sure nothing is handed out twice.
        if (comparePositions(at, position) <= 0) continue;
        moveTo(at);
        listeners.handOut(entry);
      }
      if (page.length < PAGE_SIZE || state.kind === 'closed') break;
    }
    // Woken from outside, it knows nothing of what was committed: its own store says, so a commit
    // not settled yet is retried soon rather than left to the timer.
    if (trigger === 'wake' && listeners.size > 0) shortfall.expect(await source.committedHead());
  }

  async function run(first: ReadTrigger): Promise<void> {
    for (let trigger: ReadTrigger | undefined = first; trigger !== undefined;) {
      if (state.kind !== 'reading') return;
      state.again = undefined;
      const from = position;
      try {
        await readOnce(trigger);
        if (comparePositions(position, from) > 0) advanced.handOut(undefined);
        if (failing) logger.info({ position }, `reading the ${what} log again`);
        failing = false;
        // Only delivery waits on what is committed but not settled: with nobody listening, no hurry.
        shortfall.check(position, listeners.size > 0);
      } catch (error) {
        options.onRead?.(trigger, 'error');
        // Once per outage, not once a second: the timer keeps retrying from the same position.
        if (!failing) logger.warn({ err: error, position }, `could not read the ${what} log; retrying`);
        failing = true;
      }
      trigger = state.kind === 'reading' ? state.again : undefined;
    }
    if (state.kind === 'reading') state = { kind: 'idle' };
  }

  /** Asks for a read: one starts now, or one more runs after the read in progress. */
  function request(trigger: ReadTrigger): void {
    if (state.kind === 'reading') state.again ??= trigger;
    else if (state.kind === 'idle') {
      const reading: { kind: 'reading'; again: ReadTrigger | undefined; done: Promise<void> } = {
        kind: 'reading',
        again: undefined,
        done: Promise.resolve(),
      };
      state = reading;
      reading.done = run(trigger);
    }
  }

  return {
    get position() {
      return position;
    },
    get listening() {
      return listeners.size > 0;
    },
    request,
    follow(listener: (entry: Entry) => void): FeedFollowing {
      return { position, stop: listeners.add(listener) };
    },
    onAdvance: (listener: () => void) => advanced.add(listener),
    /**
     * This replica committed an entry at `committed`, the log being settled through `settled`. With
     * listeners, read unless it was handed out already; with nobody listening, move to `settled`.
     */
    committed(committed: LogPosition, settled: LogPosition) {
      if (state.kind === 'closed') return;
      shortfall.expect(committed);
      if (listeners.size === 0) {
        const from = position;
        moveTo(settled);
        if (comparePositions(position, from) > 0) advanced.handOut(undefined);
      } else if (comparePositions(committed, position) > 0) request('wake');
    },
    async close() {
      const reading = state.kind === 'reading' ? state.done : undefined;
      state = { kind: 'closed' };
      shortfall.stop();
      await reading;
      listeners.clear();
      advanced.clear();
    },
  };
}
