import { expect } from "chai";
import { SettlementBatches } from "../../service/payments/settlement-batches";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A sender that records its batches and the time each left; `hold` keeps a batch "being sent" that long. */
function recorder(hold = 0, fail?: (items: number[]) => boolean) {
  const sent: { items: number[]; at: number }[] = [];
  const send = async (items: number[]) => {
    sent.push({ items, at: Date.now() });
    await sleep(hold);
    if (fail?.(items)) throw new Error(`batch ${items.join(",")} refused`);
    return items.map((i) => `tx-of-${items[0]}:${i}`);
  };
  return { sent, send };
}

describe("SettlementBatches: payments gathered into one settlement per batch", () => {
  it("an idle gatherer sends at once; what comes in the same moment goes in that batch, each item answered with its own result", async () => {
    const { sent, send } = recorder();
    const batches = new SettlementBatches(send, { gatherMs: 10_000, max: 50 });
    const started = Date.now();
    const results = await Promise.all([batches.add(1), batches.add(2), batches.add(3)]);
    expect(Date.now() - started, "no gathering wait when idle").to.be.lessThan(1_000);
    expect(sent.map((s) => s.items)).to.deep.equal([[1, 2, 3]]);
    expect(results).to.deep.equal(["tx-of-1:1", "tx-of-1:2", "tx-of-1:3"]);
  });

  it("while payments keep coming, a batch leaves at most once per gatherMs, carrying all that came meanwhile", async () => {
    const { sent, send } = recorder();
    const batches = new SettlementBatches(send, { gatherMs: 300, max: 50 });
    await batches.add(1);
    await Promise.all([2, 3, 4].map((i) => sleep(i * 20).then(() => batches.add(i))));
    expect(sent.map((s) => s.items)).to.deep.equal([[1], [2, 3, 4]]);
    expect(sent[1].at - sent[0].at).to.be.at.least(290);
  });

  it("once the previous batch ended, what waits goes at once instead of waiting out gatherMs", async () => {
    const { sent, send } = recorder();
    const batches = new SettlementBatches(send, { gatherMs: 10_000, max: 50 });
    await batches.add(1);
    const second = batches.add(2);
    const third = batches.add(3);
    await sleep(50);
    expect(sent, "gathering").to.have.length(1);
    batches.batchEnded();
    expect(await Promise.all([second, third])).to.deep.equal(["tx-of-2:2", "tx-of-2:3"]);
    expect(sent[1].at - sent[0].at).to.be.lessThan(5_000);
    batches.batchEnded(); // nothing waits: nothing is sent
    expect(sent).to.have.length(2);
  });

  it("one batch is sent at a time: those that come while it is out wait for the next; `max` splits a crowd", async () => {
    const { sent, send } = recorder(100);
    const batches = new SettlementBatches(send, { gatherMs: 0, max: 3 });
    const all = [1, 2, 3, 4, 5, 6, 7].map((i) => batches.add(i));
    expect(batches.size, "the first three left as soon as they were three").to.equal(4);
    await Promise.all(all);
    expect(sent.map((s) => s.items)).to.deep.equal([[1, 2, 3], [4, 5, 6], [7]]);
    for (let i = 1; i < sent.length; i++)
      expect(sent[i].at - sent[i - 1].at, "not before the previous one was out").to.be.at.least(95);
  });

  it("a batch that fails fails its own items only; the next batch still goes", async () => {
    const { sent, send } = recorder(50, (items) => items.includes(1));
    const batches = new SettlementBatches(send, { gatherMs: 0, max: 2 });
    const outcomes = await Promise.allSettled([1, 2, 3].map((i) => batches.add(i)));
    expect(outcomes.map((o) => o.status)).to.deep.equal(["rejected", "rejected", "fulfilled"]);
    expect((outcomes[0] as PromiseRejectedResult).reason.message).to.equal("batch 1,2 refused");
    expect(sent.map((s) => s.items)).to.deep.equal([[1, 2], [3]]);
    expect(batches.size).to.equal(0);
  });
});
