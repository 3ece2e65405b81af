import WebSocket from 'ws';
import { WaitingCount, type SubscriberConnection, type TooFarBehind, type WaitingGauge } from '../../collection/subscriber-queue.ts';

/**
 * How a socket whose subscriber fell too far behind is closed. 1013 "Try Again Later" is one
 * graphql-ws clients retry; the subscriber resumes with `after` set to the last cursor it received.
 */
export const SLOW_SOCKET_CLOSE = { code: 1013, reason: 'Too far behind: reconnect and resume with after' } as const;

/** One subscription's way to its socket: what waits for it, and its own part of each frame. */
export interface Recipient {
  readonly waiting: WaitingCount;
  /** Writes a `next` frame (its `{"id":…` prefix, then `tail`), or queues it behind the socket's backlog; false when the socket is not open. */
  send(tail: Buffer): boolean;
  /** Drops what still waits for it (its client completed, its socket closed). */
  forget(): void;
  /** Called once its last waiting frame has been handed to the socket. */
  onDrained: () => void;
}

/**
 * Writes pre-built frames to sockets and never waits on one: one slow reader costs the others
 * nothing. A frame is handed to a socket once the socket has taken the previous ones (ws holds at
 * most about two frames of ours per socket); until then it waits in the socket's outbox, counted for
 * its subscription. More than SUBSCRIBER_WAITING_LIMIT waiting closes the socket with 1013.
 */
export interface SocketWriter {
  /** The subscription `id` on `socket`, as frames are written to it. */
  recipient(socket: WebSocket, id: string): Recipient;
  /** The socket as the stream of a subscription that runs alone sees it: closed with 1013 when too far behind. */
  connection(socket: WebSocket): SubscriberConnection;
  /** Closes the socket with 1013, dropping what waits for it; reported once per socket (false: it was not open). */
  closeTooFarBehind(socket: WebSocket, details: Omit<TooFarBehind, 'ending'>): boolean;
}

/** A writer whose 1013 closes are reported to `onTooFarBehind`, once per socket. */
export function createSocketWriter(options: { gauge: WaitingGauge; onTooFarBehind(details: TooFarBehind): void }): SocketWriter {
  const outboxes = new WeakMap<WebSocket, Outbox>();
  const outboxOf = (socket: WebSocket) => {
    let outbox = outboxes.get(socket);
    if (!outbox) outboxes.set(socket, (outbox = new Outbox(socket)));
    return outbox;
  };
  const closeTooFarBehind = (socket: WebSocket, details: Omit<TooFarBehind, 'ending'>) => {
    if (socket.readyState !== WebSocket.OPEN) return false;
    options.onTooFarBehind({ ...details, ending: 'closed with 1013' });
    outboxes.get(socket)?.clear();
    // The close frame queues behind what ws holds; ws destroys the socket if no reply comes.
    socket.close(SLOW_SOCKET_CLOSE.code, SLOW_SOCKET_CLOSE.reason);
    return true;
  };
  return {
    recipient(socket, id) {
      const waiting = new WaitingCount(options.gauge, (count) => closeTooFarBehind(socket, { waiting: count }));
      return new SocketRecipient(outboxOf(socket), Buffer.from(`{"id":${JSON.stringify(id)}`), waiting);
    },
    connection: (socket) => ({
      tooFarBehind: (waiting) => void closeTooFarBehind(socket, { waiting }),
      onClosedBehind: (end) => outboxOf(socket).onClear(end),
    }),
    closeTooFarBehind,
  };
}

class SocketRecipient implements Recipient {
  readonly waiting: WaitingCount;
  /** `{"id":"<id>"`: the only part of a frame that differs between the subscribers of one execution. */
  readonly prefix: Buffer;
  onDrained = () => {};
  readonly #outbox: Outbox;

  constructor(outbox: Outbox, prefix: Buffer, waiting: WaitingCount) {
    this.#outbox = outbox;
    this.prefix = prefix;
    this.waiting = waiting;
  }

  send(tail: Buffer): boolean {
    return this.#outbox.send(this, tail);
  }

  forget(): void {
    this.#outbox.forget(this);
  }
}

interface Entry {
  recipient: SocketRecipient;
  tail: Buffer;
}

/** One socket's frames that wait for it to take the previous ones, in the order they were sent. */
class Outbox {
  readonly #socket: WebSocket;
  #entries: (Entry | undefined)[] = [];
  #head = 0;
  /**
   * A frame of ours is in ws with a completion callback (the marker): ws calls it once the frame is
   * written, and the backlog moves on. Only a socket that is backed up gets one; frames written
   * while the socket keeps up carry no callback (each costs Node a closure and a tick).
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

  send(recipient: SocketRecipient, tail: Buffer): boolean {
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
   * Hands a frame to ws when the kernel has taken everything before it, or as the marker when none
   * is out: ws then holds at most about two frames of ours. False: it has to wait.
   */
  #handOver({ prefix }: SocketRecipient, tail: Buffer): boolean {
    const keepingUp = this.#socket.bufferedAmount === 0;
    if (!keepingUp && this.#marked) return false;
    if (!keepingUp) this.#marked = true;
    // Text frame from a Buffer: ws frames it without another copy or UTF-8 encoding.
    this.#socket.send(Buffer.concat([prefix, tail], prefix.length + tail.length), { binary: false }, keepingUp ? undefined : this.#written);
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
    // Taken entries leave holes at the front: dropped once all are taken, or once they are many.
    if (this.#head > 0 && (this.#head === this.#entries.length || this.#head > 1024)) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
