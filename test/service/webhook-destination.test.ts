import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { loadConfig } from "../../service/config";
import { postWebhook } from "../../service/events/delivery";
import {
  checkDestination,
  classifyAddress,
  DestinationRefused,
  parseWebhookUrl,
} from "../../service/events/destination";
import { destinationPolicy } from "../../service/events/policy";

/** Where webhooks may go (SSRF): address classes, the environments' policies, the check at delivery against rebinding. */
describe("webhook destinations", () => {
  const secrets = { ADMIN_TOKEN: "a".repeat(24), DATA_ENCRYPTION_KEY: "k".repeat(32) };
  // Every start but the local sandbox is production, whatever networks it serves (ENVIRONMENT).
  const production = destinationPolicy(loadConfig({ ENVIRONMENT: "sandbox", ...secrets }));
  const sandbox = destinationPolicy(loadConfig({ ENVIRONMENT: "sandbox" }, { profile: "local" }));

  it("classifies loopback, private, link-local, metadata and reserved addresses, IPv4 inside IPv6 included", () => {
    const cases: [string, string][] = [
      ["127.0.0.1", "loopback"],
      ["127.8.9.10", "loopback"],
      ["::1", "loopback"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.168.1.1", "private"],
      ["100.64.0.1", "private"],
      ["fd12:3456::1", "private"],
      ["169.254.169.254", "metadata"],
      ["fd00:ec2::254", "metadata"],
      ["100.100.100.200", "metadata"],
      ["169.254.1.1", "link-local"],
      ["fe80::1", "link-local"],
      ["::ffff:169.254.169.254", "metadata"],
      ["64:ff9b::a9fe:a9fe", "metadata"],
      ["0.0.0.0", "reserved"],
      ["224.0.0.1", "reserved"],
      ["255.255.255.255", "reserved"],
      ["::", "reserved"],
      ["2001:db8::1", "reserved"],
      ["8.8.8.8", "public"],
      ["172.32.0.1", "public"],
      ["2606:4700::1111", "public"],
      ["not an ip", "reserved"],
    ];
    for (const [ip, kind] of cases) expect(classifyAddress(ip), ip).to.equal(kind);
  });

  it("production: https only, public addresses only; the sandbox also takes http and local receivers, never metadata or link-local", async () => {
    expect(production).to.deep.equal({ httpsOnly: true, allowPrivate: false });
    expect(sandbox).to.deep.equal({ httpsOnly: false, allowPrivate: true });
    expect(
      destinationPolicy(
        loadConfig({ ENVIRONMENT: "production", WEBHOOK_ALLOW_PRIVATE_DESTINATIONS: "true", ...secrets }),
      ),
    ).to.deep.equal({ httpsOnly: true, allowPrivate: true });

    expect(() => parseWebhookUrl("http://8.8.8.8/hook", production)).to.throw(DestinationRefused, /https/);
    expect(() => parseWebhookUrl("https://user:secret@example.com/hook", production)).to.throw(
      DestinationRefused,
      /credentials/,
    );
    expect(() => parseWebhookUrl("https://example.com/hook#x", production)).to.throw(DestinationRefused, /fragment/);
    expect(() => parseWebhookUrl("/relative", production)).to.throw(DestinationRefused, /absolute/);
    const refused = async (url: string, policy: typeof production, message: RegExp) => {
      let error: unknown;
      try {
        await checkDestination(parseWebhookUrl(url, policy), policy);
      } catch (e) {
        error = e;
      }
      expect(error, url).to.be.instanceOf(DestinationRefused);
      expect((error as Error).message).to.match(message);
    };
    await refused("https://127.0.0.1/hook", production, /loopback address/);
    await refused("https://localhost/hook", production, /loopback address/);
    await refused("https://[::ffff:10.0.0.1]/hook", production, /private address/);
    await refused("https://169.254.169.254/", production, /metadata address/);
    await refused("http://169.254.169.254/", sandbox, /metadata address/);
    await refused("http://[fe80::1]/", sandbox, /link-local/);
    expect(await checkDestination(parseWebhookUrl("http://127.0.0.1:9/hook", sandbox), sandbox)).to.deep.equal([
      "127.0.0.1",
    ]);
    expect(await checkDestination(parseWebhookUrl("https://8.8.8.8/hook", production), production)).to.deep.equal([
      "8.8.8.8",
    ]);
  });

  it("at delivery the connection goes only to an address checked then: a name resolving to loopback is refused in production, served in the sandbox", async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const options = (policy: typeof production) => ({ timeoutMs: 2000, responseLimitBytes: 4096, policy });
      // "localhost" passes no check by itself: the socket's lookup resolves it and refuses its loopback address.
      const refused = await postWebhook(
        new URL(`http://localhost:${port}/hook`),
        {},
        "{}",
        options({ httpsOnly: false, allowPrivate: false }),
      );
      expect(refused).to.include({ ok: false, statusCode: null });
      expect(refused.error).to.match(/localhost resolves to (127\.0\.0\.1|::1) is a loopback address/);
      const literal = await postWebhook(
        new URL(`http://127.0.0.1:${port}/hook`),
        {},
        "{}",
        options({ httpsOnly: false, allowPrivate: false }),
      );
      expect(literal.error).to.match(/127\.0\.0\.1 is a loopback address/);
      expect(hits).to.equal(0);
      const served = await postWebhook(new URL(`http://localhost:${port}/hook`), {}, "{}", options(sandbox));
      expect(served).to.include({ ok: true, statusCode: 200, response: "ok", error: null });
      expect(hits).to.equal(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
