import { expect } from "chai";
import { DEFAULT_PRICES, Prices, type PriceList } from "../../service/payments/pricing";
import { openDb, type Db } from "../../service/store/db";
import { migrate } from "../../service/store/migrate";
import { FakePrices } from "../fakes/prices";

type PricesUnderTest = PriceList & { set(operation: string, usdc: string): Promise<bigint> };

/** The contract of PriceList (service/payments/pricing.ts): the database's Prices and the fake (test/fakes/prices.ts). */
function describePricesContract(
  label: string,
  open: () => Promise<{ prices: PricesUnderTest; close(): Promise<void> }>,
) {
  describe(`prices' contract: ${label}`, function () {
    this.timeout(60_000);
    let s: { prices: PricesUnderTest; close(): Promise<void> };
    before(async () => (s = await open()));
    after(() => s?.close());

    it("an operation costs its tier's default of the environment (USDC, 6 decimals)", async () => {
      expect(DEFAULT_PRICES.sandbox.write).to.equal("0.01");
      expect(await s.prices.of("agentRegister", "write")).to.equal(10_000n);
      expect(await s.prices.of("faucetBkn", "faucet")).to.equal(10_000n);
      expect(await s.prices.of("agentGetter", "agentGetter")).to.equal(1n);
    });

    it("a price set for one operation overrides its tier for that operation only", async () => {
      expect(await s.prices.set("agentSetURI", "0.25")).to.equal(250_000n);
      expect(await s.prices.of("agentSetURI", "write")).to.equal(250_000n);
      expect(await s.prices.of("agentSetMetadata", "write")).to.equal(10_000n);
    });
  });
}

describePricesContract("in-memory fake", () =>
  Promise.resolve({ prices: new FakePrices("sandbox"), close: () => Promise.resolve() }),
);

describePricesContract("embedded database (PGlite)", async () => {
  const db: Db = await openDb({});
  await migrate(db);
  return { prices: new Prices(db, "sandbox"), close: () => db.close() };
});
