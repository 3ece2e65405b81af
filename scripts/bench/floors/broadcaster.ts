// Floor for the fan-out: a graphql-transport-ws server that does no GraphQL work at all. It speaks
// just enough of the protocol (connection_init → connection_ack, subscribe → remember the id,
// ping → pong, complete → forget) for graphql-ws clients, and on a webhook-shaped POST answers the
// bank's 00 at once and then writes ONE pre-serialised `next` frame to every subscription: the
// payload is serialised once, only the id is spliced in per subscriber. That is the least any
// server can do to hand one notification to N sockets, so the ratio shows our execution's cost.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { hostHttpServer } from '../host.ts';

const PROTOCOL = 'graphql-transport-ws';
/** Subscription ids per socket. */
const subscriptions = new Map<WebSocket, Set<string>>();
let subscriptionCount = 0;

function onMessage(socket: WebSocket, ids: Set<string>, raw: string): void {
  let message: { type?: string; id?: string };
  try {
    message = JSON.parse(raw);
  } catch {
    return socket.close(4400, 'Invalid message received');
  }
  if (message.type === 'connection_init') socket.send('{"type":"connection_ack"}');
  else if (message.type === 'ping') socket.send('{"type":"pong"}');
  else if (message.type === 'subscribe' && typeof message.id === 'string' && !ids.has(message.id)) {
    ids.add(message.id);
    subscriptionCount += 1;
  } else if (message.type === 'complete' && typeof message.id === 'string' && ids.delete(message.id)) subscriptionCount -= 1;
}

/** One notification to every subscription: the frame's tail is built once, the id spliced in per subscriber. */
function broadcast(notification: { settlementId?: unknown; transactionAmount?: unknown }): void {
  const data = { incomingTransfer: { settlementId: notification.settlementId, transactionAmount: notification.transactionAmount } };
  const tail = `,"type":"next","payload":${JSON.stringify({ data })}}`;
  for (const [socket, ids] of subscriptions) {
    for (const id of ids) socket.send(`{"id":${JSON.stringify(id)}${tail}`);
  }
}

const server = createServer((request, response) => {
  receive(request, response).catch((error: unknown) => response.writeHead(500).end(String(error)));
});

async function receive(request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.method !== 'POST' || request.url !== '/webhooks/collection') return void response.writeHead(404).end();
  const notification = JSON.parse(Buffer.concat(await request.toArray()).toString('utf8'));
  const body = JSON.stringify({
    requestSuccessful: true,
    sessionId: notification.sessionId,
    responseMessage: 'success',
    responseCode: '00',
  });
  response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  // After the reply, as a server that answers 00 once stored and then delivers would.
  setImmediate(() => broadcast(notification));
}

const wss = new WebSocketServer({
  server,
  path: '/graphql',
  handleProtocols: (protocols) => (protocols.has(PROTOCOL) ? PROTOCOL : false),
});
wss.on('connection', (socket) => {
  const ids = new Set<string>();
  subscriptions.set(socket, ids);
  socket.on('message', (raw) => onMessage(socket, ids, raw.toString()));
  socket.on('close', () => {
    subscriptionCount -= ids.size;
    subscriptions.delete(socket);
  });
});

await hostHttpServer(server, {
  subscriptions: () => subscriptionCount,
  stopping() {
    for (const socket of wss.clients) socket.terminate();
    wss.close();
  },
});
