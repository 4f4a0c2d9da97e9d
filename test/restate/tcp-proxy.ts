// A tiny TCP load balancer in front of worker processes, as a Kubernetes service would be: each
// incoming connection goes to the next upstream in turn; an upstream that refuses (a killed
// worker) is skipped. Both sides of a connection close together, so when a worker dies the
// server's connection to it breaks and its next one reaches a live worker.
import { createConnection, createServer, type Socket } from "node:net";

export type TcpProxy = {
  url: string;
  /** The upstream ports, in turn order; change them at any time. */
  upstreams: number[];
  /** Connections made to each upstream port so far. */
  connections: Map<number, number>;
  close: () => Promise<void>;
};

export async function startTcpProxy(upstreams: number[]): Promise<TcpProxy> {
  let next = 0;
  const sockets = new Set<Socket>();
  const proxy: TcpProxy = { url: "", upstreams, connections: new Map(), close: async () => undefined };
  const connect = (client: Socket, attempts: number): void => {
    const ports = proxy.upstreams;
    if (attempts >= ports.length || ports.length === 0) {
      client.destroy();
      return;
    }
    const port = ports[next++ % ports.length]!;
    // No Nagle: the protocol's small frames would otherwise wait for delayed ACKs (~40 ms each).
    const upstream = createConnection({ host: "127.0.0.1", port, noDelay: true });
    let connected = false;
    upstream.on("error", () => {
      if (connected) client.destroy();
      else connect(client, attempts + 1);
    });
    upstream.once("connect", () => {
      connected = true;
      proxy.connections.set(port, (proxy.connections.get(port) ?? 0) + 1);
      sockets.add(upstream);
      client.once("close", () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.resume();
    });
    upstream.once("close", () => {
      sockets.delete(upstream);
      if (connected) client.destroy();
    });
  };
  const server = createServer({ pauseOnConnect: true, noDelay: true }, (client) => {
    sockets.add(client);
    client.on("error", () => undefined);
    client.once("close", () => sockets.delete(client));
    connect(client, 0);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  proxy.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return proxy;
}
