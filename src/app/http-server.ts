/** The node:http server the app listens with: errors a route throws become 500s, and close() drops open connections. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { sendError } from '../http/respond.js';
import type { SchedulerLogger } from '../scheduler/types.js';

export interface HttpServer {
  server: Server;
  /** Listens on `port` (0: any free one) at `host`; resolves with the base URL and the port. */
  listen(port: number, host: string): Promise<{ url: string; port: number }>;
  close(): Promise<void>;
}

export function createHttpServer(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>, log: SchedulerLogger): HttpServer {
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error(`${req.method} ${req.url}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      if (!res.headersSent) sendError(res, 500, 'INTERNAL_SERVER_ERROR', 'Unexpected error.');
      else res.destroy();
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    server,
    async listen(port, host) {
      await new Promise<void>((resolveListen, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolveListen();
        });
      });
      const addr = server.address();
      const actualPort = typeof addr === 'object' && addr ? addr.port : port;
      // The URL the server uses for itself: bound to every interface, loopback reaches it.
      const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
      return { url: `http://${urlHost}:${actualPort}`, port: actualPort };
    },
    close: () =>
      new Promise<void>((done) => {
        for (const s of sockets) s.destroy();
        if (!server.listening) return done();
        server.close(() => done());
      }),
  };
}
