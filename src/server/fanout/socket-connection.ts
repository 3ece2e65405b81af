import WebSocket from 'ws';
import { WaitingCount, type SubscriberConnection, type TooFarBehind, type WaitingGauge } from '../../collection/subscriber-queue.ts';
import { nextMessage, messagePrefix, type MessagePrefix, type NextMessageTail } from './frames.ts';

/**
 * How a socket whose subscriber fell too far behind is closed. 1013 "Try Again Later" is one
 * graphql-ws clients retry; the subscriber resumes with `after` set to the last cursor it received.
 */
export const SLOW_SOCKET_CLOSE = { code: 1013, reason: 'Too far behind: reconnect and resume with after' } as const;

/** One subscription's way to its socket: what waits for it, and its own part of each message. */
export interface Recipient {
  readonly waiting: WaitingCount;
  /** Writes a `next` message, or queues it behind the socket's backlog; false when the socket is not open. */
  send(tail: NextMessageTail): boolean;
  /** Drops what still waits for it (its client completed, its socket closed). */
  forget(): void;
  /** Called once its last waiting message has been handed to the socket. */
  onDrained: () => void;
}

/**
 * One client's WebSocket as the subscriptions on it see it, made when graphql-ws acknowledges the
 * connection and kept in its context's `extra`. It writes shared executions' messages and never
 * waits on the socket, so one slow reader costs the others nothing: a message is handed to the
 * socket once it has taken the previous ones (ws then holds at most about two of ours), and until
 * then waits here, counted for its subscription. More than SUBSCRIBER_WAITING_LIMIT waiting for one
 * subscription closes the socket with 1013. As a SubscriberConnection it is what the streams that
 * run alone (graphql-ws writes their results) are ended through.
 */
export interface SocketConnection extends SubscriberConnection {
  /** Subscription `id` on this socket, as shared executions write to it. */
  recipient(id: string): Recipient;
  /**
   * The keep-alive's verdict on a socket that answered no ping: one whose messages are still on
   * their way (ws holds some: its client stopped reading) is closed with 1013 and counted like one
   * too far behind; one with nothing on its way (a client that vanished) is cut, as graphql-ws would,
   * and counted too when it held subscriptions (`holdsSubscriptions`).
   */
  unresponsive(holdsSubscriptions: boolean): void;
}

/** The connection over `socket`; its 1013 closes are reported to `onTooFarBehind`, once. */
export function openSocketConnection(
  socket: WebSocket,
  options: { gauge: WaitingGauge; onTooFarBehind(details: TooFarBehind): void },
): SocketConnection {
  const outbox = new Outbox(socket);
  const closeTooFarBehind = (details: Omit<TooFarBehind, 'ending'>): boolean => {
    if (socket.readyState !== WebSocket.OPEN) return false;
    options.onTooFarBehind({ ...details, ending: 'closed with 1013' });
    outbox.clear();
    // The close frame queues behind what ws holds; ws destroys the socket if no reply comes.
    socket.close(SLOW_SOCKET_CLOSE.code, SLOW_SOCKET_CLOSE.reason);
    return true;
  };
  return {
    recipient(id) {
      const waiting = new WaitingCount(options.gauge, (count) => closeTooFarBehind({ waiting: count }));
      return new SocketRecipient(outbox, messagePrefix(id), waiting);
    },
    tooFarBehind: (waiting) => void closeTooFarBehind({ waiting }),
    onClosedBehind: (end) => outbox.onClear(end),
    unresponsive(holdsSubscriptions) {
      const bufferedBytes = socket.bufferedAmount;
      if (bufferedBytes > 0 && closeTooFarBehind({ unansweredPing: { bufferedBytes } })) return;
      if (holdsSubscriptions && socket.readyState === WebSocket.OPEN)
        options.onTooFarBehind({ unansweredPing: { bufferedBytes }, ending: 'cut' });
      socket.terminate();
    },
  };
}

class SocketRecipient implements Recipient {
  readonly waiting: WaitingCount;
  readonly prefix: MessagePrefix;
  onDrained = () => {};
  readonly #outbox: Outbox;

  constructor(outbox: Outbox, prefix: MessagePrefix, waiting: WaitingCount) {
    this.#outbox = outbox;
    this.prefix = prefix;
    this.waiting = waiting;
  }

  send(tail: NextMessageTail): boolean {
    return this.#outbox.send(this, tail);
  }

  forget(): void {
    this.#outbox.forget(this);
  }
}

interface Entry {
  recipient: SocketRecipient;
  tail: NextMessageTail;
}

/** Taken entries leave holes at the front of the queue; past this many they are dropped even mid-backlog. */
const COMPACT_AFTER = 1024;

/** One socket's messages that wait for it to take the previous ones, in the order they were sent. */
class Outbox {
  readonly #socket: WebSocket;
  #entries: (Entry | undefined)[] = [];
  #head = 0;
  /**
   * A message of ours is in ws with a completion callback (the marker): ws calls it once the
   * message is written, and the backlog moves on. Only a socket that is backed up gets one; messages
   * written while the socket keeps up carry no callback (each costs Node a closure and a tick).
   */
  #marked = false;
  readonly #cleared = new Set<() => void>();
  readonly #written = () => {
    this.#marked = false;
    this.#flush();
  };

  constructor(socket: WebSocket) {
    this.#socket = socket;
  }

  send(recipient: SocketRecipient, tail: NextMessageTail): boolean {
    if (this.#socket.readyState !== WebSocket.OPEN) return false;
    if (this.#head < this.#entries.length || !this.#handOver(recipient, tail)) {
      this.#entries.push({ recipient, tail });
      recipient.waiting.add();
    }
    return true;
  }

  forget(recipient: SocketRecipient): void {
    if (recipient.waiting.value === 0) return;
    this.#entries = this.#entries.slice(this.#head).filter((entry) => entry?.recipient !== recipient);
    this.#head = 0;
    recipient.waiting.clear();
  }

  /** Drops everything (the socket is being closed), and tells the streams writing to it on their own. */
  clear(): void {
    for (const entry of this.#entries.slice(this.#head)) entry?.recipient.waiting.clear();
    this.#entries = [];
    this.#head = 0;
    for (const end of [...this.#cleared]) end();
    this.#cleared.clear();
  }

  /** Calls `end` on `clear()`; returns how to stop listening. */
  onClear(end: () => void): () => void {
    this.#cleared.add(end);
    return () => void this.#cleared.delete(end);
  }

  /**
   * Hands a message to ws when the kernel has taken everything before it, or as the marker when
   * none is out: ws then holds at most about two messages of ours. False: it has to wait.
   */
  #handOver({ prefix }: SocketRecipient, tail: NextMessageTail): boolean {
    const keepingUp = this.#socket.bufferedAmount === 0;
    if (!keepingUp && this.#marked) return false;
    if (!keepingUp) this.#marked = true;
    // A text frame from a Buffer: ws frames it without another copy or UTF-8 encoding.
    this.#socket.send(nextMessage(prefix, tail), { binary: false }, keepingUp ? undefined : this.#written);
    return true;
  }

  #flush(): void {
    while (this.#head < this.#entries.length && this.#socket.readyState === WebSocket.OPEN) {
      const { recipient, tail } = this.#entries[this.#head]!;
      if (!this.#handOver(recipient, tail)) break;
      this.#entries[this.#head++] = undefined;
      recipient.waiting.remove();
      if (recipient.waiting.value === 0) recipient.onDrained();
    }
    if (this.#head > 0 && (this.#head === this.#entries.length || this.#head > COMPACT_AFTER)) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
