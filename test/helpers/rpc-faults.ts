import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A JSON-RPC proxy between the service and a chain that misbehaves on demand, the way public RPC providers do:
 * throttling with Retry-After, stalls, reset connections, outages, passing JSON-RPC errors (`header not found`),
 * answers lost after the node acted, and a node lagging a few blocks behind. Rules apply to the requests (or, for
 * JSON-RPC errors and lag, the batch items) whose method they name; each may be limited to a number of hits or a rate.
 */
export type Fault =
  /** The HTTP request is refused with this status (429 with Retry-After: a rate limit; 502/503: a gateway). */
  | { kind: "http"; status: number; retryAfter?: string }
  /** The request is held this long before it is forwarded (a slow or stalled backend). */
  | { kind: "stall"; ms: number }
  /** The connection is reset without an answer, before the node saw the request. */
  | { kind: "reset" }
  /** The node acts on the request, but its answer is lost (the connection is reset after forwarding). */
  | { kind: "lose-answer" }
  /** Matching items are answered with this JSON-RPC error instead of being forwarded. */
  | { kind: "rpc-error"; code: number; message: string }
  /** The node is `blocks` behind: block number, receipts, transactions and "latest" reads as of that head. */
  | { kind: "lag"; blocks: number };

export type FaultRule = Fault & {
  /** JSON-RPC methods it applies to; default all. */
  methods?: string[];
  /** How many hits at most; default unlimited. */
  times?: number;
  /** Probability per matching request (or item), 0–1; default 1. */
  rate?: number;
};

interface RpcRequest {
  jsonrpc: "2.0";
  id: number | string | null;
  method: string;
  params?: unknown[];
}

interface ActiveRule {
  rule: FaultRule;
  hits: number;
}

/** Counts of what the proxy did, for the scenario reports. */
export interface ProxyStats {
  requests: number;
  items: number;
  faulted: number;
  byKind: Record<string, number>;
}

/** Random decisions from a seed, so a scenario's faults repeat from run to run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x100000000;
  };
}

export class RpcFaultProxy {
  private rules: ActiveRule[] = [];
  private server!: http.Server;
  private readonly sockets = new Set<Socket>();
  private down = false;
  private random: () => number;
  readonly stats: ProxyStats = { requests: 0, items: 0, faulted: 0, byKind: {} };
  url = "";
  port = 0;

  private constructor(
    readonly upstream: string,
    seed: number,
  ) {
    this.random = seeded(seed);
  }

  /** Starts a proxy to `upstream` on an ephemeral port of 127.0.0.1. */
  static async start(upstream: string, seed = 1): Promise<RpcFaultProxy> {
    const proxy = new RpcFaultProxy(upstream, seed);
    await proxy.listen(0);
    return proxy;
  }

  /** Adds a rule; returns a function that removes it. */
  add(rule: FaultRule): () => void {
    const active = { rule, hits: 0 };
    this.rules.push(active);
    return () => {
      this.rules = this.rules.filter((r) => r !== active);
    };
  }

  clear(): void {
    this.rules = [];
  }

  /** A full outage: connections are refused (the port closes) for `ms`, then it serves again on the same port. */
  async outage(ms: number): Promise<void> {
    this.down = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    await new Promise((resolve) => setTimeout(resolve, ms));
    await this.listen(this.port);
    this.down = false;
  }

  async close(): Promise<void> {
    this.clear();
    for (const socket of this.sockets) socket.destroy();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async listen(port: number): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.keepAliveTimeout = 5_000;
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.once("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, "127.0.0.1", () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}`;
  }

  /** The first rule of the given kinds naming one of `methods` that fires (counting its hit). */
  private fire(methods: string | string[], kinds: Fault["kind"][]): FaultRule | undefined {
    const named = typeof methods === "string" ? [methods] : methods;
    for (const active of this.rules) {
      const { rule } = active;
      if (!kinds.includes(rule.kind)) continue;
      if (rule.methods && !named.some((method) => rule.methods!.includes(method))) continue;
      if (rule.times !== undefined && active.hits >= rule.times) continue;
      if (rule.rate !== undefined && this.random() >= rule.rate) continue;
      // Lag is a state of the node, not a hit: it is not counted against `times` per item.
      if (rule.kind !== "lag") active.hits++;
      this.stats.faulted++;
      this.stats.byKind[rule.kind] = (this.stats.byKind[rule.kind] ?? 0) + 1;
      return rule;
    }
    return undefined;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (this.down) return void req.socket.destroy();
    this.stats.requests++;
    let parsed: RpcRequest | RpcRequest[];
    try {
      parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const items = Array.isArray(parsed) ? parsed : [parsed];
    this.stats.items += items.length;
    // Faults of the whole HTTP request: one draw per request, by the first rule that names a method the request
    // carries. Drawing once per item would make a batch of eight stall or be throttled almost every time.
    const whole = this.fire(
      items.map((item) => item.method),
      ["http", "stall", "reset", "lose-answer"],
    );
    if (whole?.kind === "http") {
      res.writeHead(whole.status, {
        "content-type": "application/json",
        ...(whole.retryAfter ? { "retry-after": whole.retryAfter } : {}),
      });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32005, message: `HTTP ${whole.status} from the fault proxy` },
        }),
      );
      return;
    }
    if (whole?.kind === "reset") return void req.socket.destroy();
    if (whole?.kind === "stall") await new Promise((resolve) => setTimeout(resolve, whole.ms));
    if (req.socket.destroyed) return;

    const answers = await Promise.all(items.map((item) => this.answer(item)));
    if (whole?.kind === "lose-answer") return void req.socket.destroy();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
  }

  /** One item: a JSON-RPC error, a lagging node's answer, or the node's own. */
  private async answer(item: RpcRequest): Promise<unknown> {
    const error = this.fire(item.method, ["rpc-error"]);
    if (error?.kind === "rpc-error")
      return { jsonrpc: "2.0", id: item.id, error: { code: error.code, message: error.message } };
    const lag = this.fire(item.method, ["lag"]);
    if (lag?.kind === "lag") return this.lagging(item, lag.blocks);
    return this.forward(item);
  }

  private async forward(item: RpcRequest): Promise<{ id: unknown; result?: unknown; error?: unknown }> {
    const response = await fetch(this.upstream, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(item),
    });
    return (await response.json()) as { id: unknown; result?: unknown; error?: unknown };
  }

  /** What a node `blocks` behind the chain answers. */
  private async lagging(item: RpcRequest, blocks: number): Promise<unknown> {
    const head = Number(
      ((await this.forward({ jsonrpc: "2.0", id: 0, method: "eth_blockNumber", params: [] })).result as string) ??
        "0x0",
    );
    const lagHead = Math.max(0, head - blocks);
    const hex = "0x" + lagHead.toString(16);
    const params = [...(item.params ?? [])];
    switch (item.method) {
      case "eth_blockNumber":
        return { jsonrpc: "2.0", id: item.id, result: hex };
      case "eth_getBlockByNumber":
        if (params[0] === "latest" || params[0] === "pending") params[0] = hex;
        else if (typeof params[0] === "string" && Number(params[0]) > lagHead)
          return { jsonrpc: "2.0", id: item.id, result: null };
        return { ...(await this.forward({ ...item, params })), id: item.id };
      case "eth_getTransactionCount":
      case "eth_getBalance":
      case "eth_call":
        if (params[params.length - 1] === "latest") params[params.length - 1] = hex;
        return { ...(await this.forward({ ...item, params })), id: item.id };
      case "eth_getTransactionReceipt": {
        const answer = await this.forward(item);
        const receipt = answer.result as { blockNumber?: string } | null;
        return receipt && Number(receipt.blockNumber) > lagHead
          ? { jsonrpc: "2.0", id: item.id, result: null }
          : answer;
      }
      case "eth_getTransactionByHash": {
        const answer = await this.forward(item);
        const tx = answer.result as Record<string, unknown> | null;
        if (tx && tx.blockNumber && Number(tx.blockNumber) > lagHead)
          return { ...answer, result: { ...tx, blockNumber: null, blockHash: null, transactionIndex: null } };
        return answer;
      }
      default:
        return this.forward(item);
    }
  }
}
