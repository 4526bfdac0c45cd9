import http from "node:http";

/**
 * POST with Node's own HTTP client over kept-alive connections: the client stack ethers uses for the raw JSON-RPC
 * side of a bench, so both sides of a comparison pay the same client cost. (Node's fetch, undici, costs ~0.8 ms more
 * per request on this machine, which would count against the service only.)
 */
const agent = new http.Agent({ keepAlive: true });

export function postJsonRaw(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
          } catch (error) {
            reject(error instanceof Error ? error : new Error(String(error)));
          }
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
