import { expect } from "chai";
import { Wallet } from "ethers";
import { clientSubject } from "../../service/auth/client-address";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/** Per-IP limits behind proxies (TRUST_PROXY) and for IPv6 callers (one /64, one caller). */
describe("per-IP limits: the client behind proxies, IPv6 by /64", function () {
  this.timeout(120_000);

  it("an IPv6 caller is its /64; IPv4, and IPv4 carried in IPv6, is its address", () => {
    const subject = (ip: string) => clientSubject({ ip });
    expect(subject("203.0.113.7")).to.equal("ip:203.0.113.7");
    expect(subject("::ffff:203.0.113.7")).to.equal("ip:203.0.113.7");
    expect(subject("2001:db8:1:2::1")).to.equal("ip6:2001:db8:1:2::/64");
    expect(subject("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).to.equal("ip6:2001:db8:1:2::/64");
    expect(subject("2001:db8::1")).to.equal("ip6:2001:db8:0:0::/64");
    expect(subject("::1")).to.equal("ip6:0:0:0:0::/64");
    expect(subject("fe80::1%eth0")).to.equal("ip6:fe80:0:0:0::/64");
    expect(subject("2001:db8:1:3::1")).to.not.equal(subject("2001:db8:1:2::1"));
  });

  describe("through the service", () => {
    let sandbox: Sandbox;
    let service: TestService | undefined;
    before(async () => {
      sandbox = await getSandbox();
    });
    afterEach(async () => {
      await service?.stop();
      service = undefined;
    });
    // A prepare without a key for a method that needs one: answered 401 after the per-IP limit counted it (a fresh
    // wallet each time, so only the per-IP limit applies).
    const body = () => ({
      method: "whitelist",
      chainId: "aa36a7",
      signerAddress: Wallet.createRandom().address,
      tokenSymbol: "NONE",
      userToWhitelist: [],
    });
    const burst = async (forwardedFor: (i: number) => string, n = 31) => {
      const statuses: number[] = [];
      for (let i = 0; i < n; i++)
        statuses.push(
          (await service!.api.post("/prepare-transactions", body(), { "x-forwarded-for": forwardedFor(i) })).status,
        );
      return statuses;
    };

    it("TRUST_PROXY=1 (a load balancer in front): each client named by X-Forwarded-For has its own limit; IPv6 callers of one /64 share one", async () => {
      service = await startTestService(sandbox, { env: { TRUST_PROXY: "1" } });
      const first = await burst(() => "198.51.100.1");
      expect(first.slice(0, 30).every((s) => s === 401)).to.equal(true);
      expect(first[30]).to.equal(429);
      expect((await burst(() => "198.51.100.2", 1))[0], "another client").to.equal(401);
      const sameNetwork = await burst((i) => `2001:db8:7:1::${(i + 1).toString(16)}`);
      expect(sameNetwork[30], "31 addresses of one /64").to.equal(429);
      expect((await burst(() => "2001:db8:7:2::1", 1))[0], "the next /64").to.equal(401);
    });

    it("TRUST_PROXY=false: X-Forwarded-For is not believed, so a caller cannot pick a fresh limit", async () => {
      service = await startTestService(sandbox, { env: { TRUST_PROXY: "false" } });
      const statuses = await burst((i) => `198.51.100.${i + 1}`);
      expect(statuses[30]).to.equal(429);
    });
  });
});
