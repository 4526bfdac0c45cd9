import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A JSON-RPC endpoint in front of a local chain that can stall: while stalled it accepts every request and answers
 * none (what a hung node or a black-holed load balancer does: connections open, no reply, no error). Resuming answers
 * the requests held meanwhile.
 */
export class StallableRpc {
  stalled = false;
  private readonly held: (() => void)[] = [];

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<StallableRpc> {
    const holder: { self?: StallableRpc } = {};
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const forward = () =>
          void fetch(target, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: Buffer.concat(chunks),
          })
            .then(
              async (answer) =>
                void res
                  .writeHead(answer.status, { "content-type": "application/json" })
                  .end(Buffer.from(await answer.arrayBuffer())),
            )
            .catch(() => res.destroy());
        if (holder.self?.stalled) holder.self.held.push(forward);
        else void forward();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    holder.self = new StallableRpc(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return holder.self;
  }

  stall(): void {
    this.stalled = true;
  }

  resume(): void {
    this.stalled = false;
    for (const forward of this.held.splice(0)) forward();
  }

  async close(): Promise<void> {
    this.held.length = 0;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
