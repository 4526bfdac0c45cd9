import { expect } from "chai";
import { parseEther } from "ethers";
import { auditChanges } from "../../service/console/audit";
import { stuckBounds, type ChainFacts } from "../../service/console/chain-facts";
import { AuditQuery, TransactionsQuery } from "../../service/console/queries";
import {
  ether,
  headSignal,
  paymentSignals,
  stuckSignal,
  walletSignal,
  webhooksSignal,
} from "../../service/console/triage";
import { hideSecrets } from "../../service/console/webhook-attempts";

/**
 * The console's triage rules (issue 50): the thresholds as states, the audit log's field-by-field changes, the secrets
 * kept out of a receiver's answer, and the filters a URL may state.
 */
describe("the console's triage", () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  const chain = (ageSeconds: number | null, blockSeconds = 2): ChainFacts => ({
    chainId: 8453,
    name: "Base mainnet",
    currency: "ETH",
    head:
      ageSeconds === null
        ? null
        : { number: 1000, timestamp: Math.round(now / 1000) - ageSeconds, baseFeePerGas: 5_000_000n },
    blockSeconds,
    explorer: "https://basescan.org",
  });

  it("a chain head: OK within a few block times, a warning past three, failing past ten (at least 30 s), or without an answer", () => {
    expect(headSignal(chain(1), now)).to.include({ state: "ok", value: "1 s old (block 1000)" });
    expect(headSignal(chain(9), now).state).to.equal("warn");
    expect(headSignal(chain(68), now)).to.include({ state: "bad" });
    expect(headSignal(chain(68), now).words).to.match(/^34 block times without a new block/);
    expect(headSignal(chain(40, 12), now).state, "Ethereum: 40 s is about three blocks").to.equal("warn");
    expect(headSignal(chain(null), now)).to.include({ state: "bad", value: "no answer" });
    expect(headSignal(chain(1), now).link).to.equal("/console/transactions?chain=8453&status=sending");
  });

  it("stuck transactions: failing when one waits the threshold's blocks, a warning when only priced below the base fee", () => {
    expect(stuckSignal(0, null, 10).state).to.equal("ok");
    expect(stuckSignal(2, 14, 10)).to.include({ state: "bad", value: "2", link: "/console/transactions?stuck=1" });
    expect(stuckSignal(1, 2, 10).state).to.equal("warn");
    const bounds = stuckBounds([chain(1)], 10, now);
    expect(bounds).to.deep.equal([
      {
        chainId: 8453,
        maxBroadcastBlock: 990,
        sentBefore: new Date(now - 20_000).toISOString(),
        baseFeePerGas: "5000000",
      },
    ]);
    expect(stuckBounds([chain(null)], 10, now)[0]).to.include({ maxBroadcastBlock: null, baseFeePerGas: null });
  });

  it("a wallet: failing under a day of its recent spend, a warning under three days or when low, its balance with its unit", () => {
    const wallet = (balance: string, spent: string | null, low = false) =>
      walletSignal({
        role: "relayer",
        chainId: 8453,
        address: "0xAbC0000000000000000000000000000000000001",
        currency: "ETH",
        balanceWei: parseEther(balance),
        spentPerDayWei: spent === null ? null : parseEther(spent),
        low,
      });
    expect(wallet("0.5", "1")).to.include({ state: "bad", value: "0.5 ETH" });
    expect(wallet("0.5", "1").words).to.include("0.5 days");
    expect(wallet("2.5", "1").state).to.equal("warn");
    expect(wallet("10", "1").state).to.equal("ok");
    expect(wallet("10", "0", true).state, "no spend, but low at today's fees").to.equal("warn");
    expect(wallet("10", null).state).to.equal("ok");
    expect(wallet("10", null).link).to.equal("/console/transactions?q=0xAbC0000000000000000000000000000000000001");
    expect(ether(parseEther("9999.999963123456789"))).to.equal("9999.999963");
    expect(ether(1n)).to.equal("< 0.000001");
    expect(ether(0n)).to.equal("0");
  });

  it("webhooks owed count enabled endpoints only; settlements and reservations by the age of the oldest", () => {
    expect(webhooksSignal({ owed: 0, oldestOwedSeconds: 0, paused: 6 })).to.include({ state: "ok", value: "0" });
    expect(webhooksSignal({ owed: 0, oldestOwedSeconds: 0, paused: 6 }).words).to.include(
      "6 more wait at disabled endpoints",
    );
    expect(webhooksSignal({ owed: 3, oldestOwedSeconds: 311, paused: 0 }).state).to.equal("warn");
    expect(webhooksSignal({ owed: 3, oldestOwedSeconds: 3600, paused: 0 }).state).to.equal("bad");
    const ago = (s: number) => new Date(now - s * 1000).toISOString();
    const [settling, reserved] = paymentSignals(
      { settling: { count: 2, oldestAt: ago(20 * 60) }, reserved: { count: 1, oldestAt: ago(60) } },
      now,
    );
    expect(settling).to.include({ state: "bad", value: "2", link: "/console/payments?status=settling" });
    expect(reserved).to.include({ state: "ok", link: "/console/payments?status=reserved" });
  });

  it("audit entries read as what changed, field by field", () => {
    expect(
      auditChanges({ disabledAt: null, reason: "old", n: 1 }, { disabledAt: "2026-12-01T00:00:00Z", n: 1, added: [1] }),
    ).to.deep.equal({
      changes: [
        { path: "disabledAt", change: "changed", before: "null", after: '"2026-12-01T00:00:00Z"' },
        { path: "reason", change: "removed", before: '"old"', after: null },
        { path: "added", change: "added", before: null, after: "[1]" },
      ],
      unchanged: 1,
    });
    expect(auditChanges(null, { a: { b: 2 } }).changes).to.deep.equal([
      { path: "a.b", change: "added", before: null, after: "2" },
    ]);
    expect(auditChanges([{ id: 1 }], [{ id: 2 }]).changes[0]).to.include({ path: "[0].id", before: "1", after: "2" });
    expect(auditChanges({ long: "x".repeat(300) }, {}).changes[0].before).to.have.length(201);
  });

  it("a receiver's answer never shows what looks like a secret", () => {
    const shown = hideSecrets(
      'echo: webhook-signature=v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= secret "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" ' +
        '{"apiKey": "tak_0123456789abcdef_xyz", "password": "hunter2", "txHash": "0x' +
        "ab".repeat(32) +
        '"} ' +
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig key 0x" +
        "cd".repeat(32),
    );
    expect(shown)
      .to.not.include("K5oZfzN95Z9")
      .and.not.include("MfKQ9r8")
      .and.not.include("tak_0123")
      .and.not.include("hunter2")
      .and.not.include("eyJhbGci")
      .and.not.include("cd".repeat(32));
    expect(shown).to.include("ab".repeat(32)); // a transaction's hash is not a secret
  });

  it("filters a URL states: times as UTC, a range in order, one direction per page, only known values", () => {
    expect(TransactionsQuery.parse({ from: "2026-12-01T10:00", to: "2026-12-01T11:30:00+01:00" })).to.deep.include({
      from: "2026-12-01T10:00:00.000Z",
      to: "2026-12-01T10:30:00.000Z",
    });
    const refused = (query: Record<string, unknown>) => {
      const result = TransactionsQuery.safeParse(query);
      return result.success ? "" : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    };
    expect(refused({ from: "2026-12-01T11:00", to: "2026-12-01T10:00" })).to.equal("to: must be after from");
    expect(refused({ before: "a", after: "b" })).to.include("after: cannot be given with before");
    expect(refused({ status: "stuck" })).to.match(/^status: must be a batch status: prepared, sending/);
    expect(refused({ method: "dropTables" })).to.match(/^method: must be a method/);
    expect(refused({ chain: "base" })).to.match(/^chain: must be a chain id/);
    expect(refused({ from: "yesterday" })).to.match(/^from: must be a time/);
    expect(refused({ stuck: "yes" })).to.match(/^stuck: must be "1"/);
    expect(refused({ sort: "asc" })).to.include("sort");
    expect(AuditQuery.safeParse({ action: "keys.create" }).success).to.equal(true);
    expect(AuditQuery.safeParse({ action: "DROP TABLE" }).success).to.equal(false);
  });
});
