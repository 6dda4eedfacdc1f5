// A TCP relay to a server (QuestDB's HTTP or PostgreSQL-wire port) whose connections a test can
// cut: at once, refusing new ones for a while (a restart), or once a number of bytes more have
// come back from the server (mid-answer). Stands for QuestDB going away without restarting the
// server the tests share.
import net from 'node:net';

export interface TcpRelay {
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Resets every connection now and refuses new ones for `ms`. */
  cut(ms: number): void;
  /** Resets every connection once `bytes` more have come back from the server; resolves then. */
  cutAfter(bytes: number): Promise<void>;
  close(): void;
}

export async function tcpRelay(target: URL, defaultPort: number): Promise<TcpRelay> {
  let downUntil = 0;
  let armed: { left: number; done: () => void } | undefined;
  const sockets = new Set<net.Socket>();
  const reset = () => {
    for (const s of sockets) s.destroy();
  };
  const server = net.createServer((client) => {
    if (Date.now() < downUntil) return client.destroy();
    const upstream = net.connect(Number(target.port || defaultPort), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      client.write(chunk);
      if (!armed) return;
      armed.left -= chunk.length;
      if (armed.left > 0) return;
      const { done } = armed;
      armed = undefined;
      reset();
      done();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    cut(ms) {
      downUntil = Date.now() + ms;
      reset();
    },
    cutAfter: (bytes) => new Promise<void>((done) => (armed = { left: bytes, done })),
    close() {
      reset();
      server.close();
    },
  };
}
