/**
 * A plain HTTP server on 127.0.0.1 for tests of HTTP clients: it records every request (method,
 * path, headers, body read whole), counts connections, and hands each request to the test's
 * handler. `closeAll` drops every connection and stops it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface RecordingServer {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  base: string;
  seen: SeenRequest[];
  connections(): number;
  /** Sockets to drop at the end (the server's, and any a test adds). */
  sockets: Set<Socket>;
  closeAll(): Promise<void>;
}

export async function startRecordingServer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<RecordingServer> {
  const seen: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handle(req, res, body);
    });
  });
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    connections: () => connections,
    sockets,
    closeAll: async () => {
      for (const s of sockets) s.destroy();
      if (server.listening) await new Promise((r) => server.close(r));
    },
  };
}
