import WebSocket from 'ws';
import { WaitingCount, type SubscriberConnection, type WaitingGauge } from '../../collection/subscriber-queue.ts';

/**
 * How a socket whose subscriber fell too far behind is closed. 1013 "Try Again Later" is one
 * graphql-ws clients retry; the subscriber resumes with `after` set to the last cursor it received.
 */
export const SLOW_SOCKET_CLOSE = { code: 1013, reason: 'Too far behind: reconnect and resume with after' } as const;

/** One subscription's frames on its socket: the part of each frame that is its own, and what waits for it. */
export interface Recipient {
  readonly socket: WebSocket;
  /** `{"id":"<id>"`: the only part of a frame that differs between the subscribers of one execution. */
  readonly prefix: Buffer;
  readonly waiting: WaitingCount;
  /** Its last waiting frame has been handed to the socket. */
  drained(): void;
}

/**
 * Writes pre-built frames to sockets and never waits on one: one slow reader costs the others
 * nothing. A frame is handed to a socket only once the socket has taken the previous ones (ws holds
 * at most about one frame of ours per socket); until then it waits in the socket's outbox, counted
 * for its subscription. More than SUBSCRIBER_WAITING_LIMIT waiting closes the socket with 1013.
 */
export interface SocketWriter {
  /** Writes `prefix + tail` as a text frame, or queues it behind the socket's backlog; false when the socket is not open. */
  send(recipient: Recipient, tail: Buffer): boolean;
  /** Drops what still waits for a recipient that left (its client completed, its socket closed). */
  forget(recipient: Recipient): void;
  /** A waiting count for a subscription on `socket`: over the limit, the socket is closed with 1013. */
  waitingCount(socket: WebSocket): WaitingCount;
  /** The socket as the stream of a subscription that runs alone sees it: closed with 1013 when too far behind. */
  connection(socket: WebSocket): SubscriberConnection;
}

/** A writer whose 1013 closes are reported to `onTooFarBehind`, once per socket. */
export function createSocketWriter(options: { gauge: WaitingGauge; onTooFarBehind(waiting: number): void }): SocketWriter {
  const outboxes = new WeakMap<WebSocket, Outbox>();
  const outboxOf = (socket: WebSocket) => {
    let outbox = outboxes.get(socket);
    if (!outbox) outboxes.set(socket, (outbox = new Outbox(socket)));
    return outbox;
  };
  const closeTooFarBehind = (socket: WebSocket, waiting: number) => {
    if (socket.readyState !== WebSocket.OPEN) return;
    options.onTooFarBehind(waiting);
    outboxes.get(socket)?.clear();
    // The close frame queues behind what ws holds; ws destroys the socket if no reply comes.
    socket.close(SLOW_SOCKET_CLOSE.code, SLOW_SOCKET_CLOSE.reason);
  };
  return {
    send: (recipient, tail) => outboxOf(recipient.socket).send(recipient, tail),
    forget: (recipient) => outboxes.get(recipient.socket)?.forget(recipient),
    waitingCount: (socket) => new WaitingCount(options.gauge, (waiting) => closeTooFarBehind(socket, waiting)),
    connection: (socket) => ({ tooFarBehind: (waiting) => closeTooFarBehind(socket, waiting) }),
  };
}

interface Entry {
  recipient: Recipient;
  tail: Buffer;
}

/** One socket's frames that wait for it to take the previous ones, in the order they were sent. */
class Outbox {
  readonly #socket: WebSocket;
  #entries: (Entry | undefined)[] = [];
  #head = 0;
  /** Our frames handed to ws whose write has not completed. */
  #inFlight = 0;
  // One function for every write: Node batches the completions of consecutive writes that share one.
  readonly #written = () => {
    this.#inFlight -= 1;
    this.#flush();
  };

  constructor(socket: WebSocket) {
    this.#socket = socket;
  }

  send(recipient: Recipient, tail: Buffer): boolean {
    if (this.#socket.readyState !== WebSocket.OPEN) return false;
    if (this.#head === this.#entries.length && this.#writable()) {
      this.#write(recipient, tail);
    } else {
      this.#entries.push({ recipient, tail });
      recipient.waiting.add();
    }
    return true;
  }

  forget(recipient: Recipient): void {
    if (recipient.waiting.value === 0) return;
    this.#entries = this.#entries.slice(this.#head).filter((entry) => entry?.recipient !== recipient);
    this.#head = 0;
    recipient.waiting.clear();
  }

  /** Drops everything (the socket is being closed). */
  clear(): void {
    for (const entry of this.#entries.slice(this.#head)) entry?.recipient.waiting.clear();
    this.#entries = [];
    this.#head = 0;
  }

  /**
   * ws holds nothing (the kernel took every frame), or none of ours: then the socket has a write of
   * ours to complete and call us back, whatever else (graphql-ws's own messages) it holds.
   */
  #writable(): boolean {
    return this.#socket.bufferedAmount === 0 || this.#inFlight === 0;
  }

  #write({ prefix }: Recipient, tail: Buffer): void {
    this.#inFlight += 1;
    // Text frame from a Buffer: ws frames it without another copy or UTF-8 encoding.
    this.#socket.send(Buffer.concat([prefix, tail], prefix.length + tail.length), { binary: false }, this.#written);
  }

  #flush(): void {
    while (this.#head < this.#entries.length && this.#socket.readyState === WebSocket.OPEN && this.#writable()) {
      const { recipient, tail } = this.#entries[this.#head]!;
      this.#entries[this.#head++] = undefined;
      recipient.waiting.remove();
      this.#write(recipient, tail);
      if (recipient.waiting.value === 0) recipient.drained();
    }
    // Taken entries leave holes at the front: dropped once they are most of the array.
    if (this.#head === this.#entries.length || this.#head > 1024) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
