import WebSocket from 'ws';

/**
 * Bytes a socket may have queued (not yet taken by the kernel) before its next frame is refused.
 * Far beyond what a reader keeping up ever holds (a notification is a few KB; the webhook caps a
 * body at 1 MiB), small enough that thousands of sockets cannot hold the process's memory hostage.
 */
export const SOCKET_BUFFER_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * How a socket that fell too far behind is closed. 1013 "Try Again Later" is one graphql-ws
 * clients retry; the subscriber resumes with `after` set to the last cursor it received.
 */
export const SLOW_SOCKET_CLOSE = { code: 1013, reason: 'Too far behind: reconnect and resume with after' } as const;

/** Writes pre-built frames to sockets, closing any whose queue is over the limit instead of growing it. */
export interface SocketWriter {
  /** Sends `frame` as a text message; false when the socket is not open or was closed for falling behind. */
  write(socket: WebSocket, frame: Buffer): boolean;
}

/**
 * A writer that never waits on a socket: one slow reader costs the others nothing. `onTooFarBehind`
 * hears of each socket it closes, once.
 */
export function createSocketWriter(options: { onTooFarBehind(bufferedBytes: number): void; limitBytes?: number }): SocketWriter {
  const limit = options.limitBytes ?? SOCKET_BUFFER_LIMIT_BYTES;
  return {
    write(socket, frame) {
      if (socket.readyState !== WebSocket.OPEN) return false;
      if (socket.bufferedAmount > limit) {
        options.onTooFarBehind(socket.bufferedAmount);
        // The close frame queues behind what is buffered; ws destroys the socket if no reply comes.
        socket.close(SLOW_SOCKET_CLOSE.code, SLOW_SOCKET_CLOSE.reason);
        return false;
      }
      // Text frame from a Buffer: ws frames it without another copy or UTF-8 encoding.
      socket.send(frame, { binary: false });
      return true;
    },
  };
}
