import http from "node:http";
import { expect } from "chai";
import { getSandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

interface Answer {
  status: number;
  connection: string | undefined;
}

function get(url: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
      })
      .on("error", reject);
  });
}

/**
 * A stop (SIGTERM) while clients hold keep-alive connections (service/server.ts stop): a request a client sends on
 * one as the stop begins is answered, with `Connection: close`, rather than lost to a connection cut under it; a new
 * connection is refused.
 */
describe("graceful drain: keep-alive connections at a stop", function () {
  this.timeout(60_000);
  let service: TestService | undefined;

  after(async () => {
    await service?.stop();
  });

  it("a request on an open keep-alive connection after the stop began is answered with Connection: close; a new connection is refused", async () => {
    service = await startTestService(await getSandbox());
    const health = `${service.url}/health`;
    const kept = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const fresh = new http.Agent({ keepAlive: false });
    try {
      const before = await get(health, kept);
      expect(before.status).to.equal(200);
      expect(before.connection).to.equal("keep-alive");

      const stopping = service.stop();
      service = undefined;
      const during = await get(health, kept);
      expect(during.status).to.be.within(200, 599);
      expect(during.connection).to.equal("close");
      let refused: NodeJS.ErrnoException | undefined;
      await get(health, fresh).catch((error: NodeJS.ErrnoException) => (refused = error));
      expect(refused?.code).to.equal("ECONNREFUSED");
      await stopping;
    } finally {
      kept.destroy();
      fresh.destroy();
    }
  });
});
