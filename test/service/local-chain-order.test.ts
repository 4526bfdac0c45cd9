import { expect } from "chai";
import hre from "hardhat";
import { Transaction } from "ethers";
import { startLocalChain, type LocalChain } from "../../scripts/lib/local-chain";
import { testAccounts } from "../helpers/sandbox";

/** One HTTP request carrying `calls` as a JSON-RPC batch; answers the results in the calls' order. */
async function batch(url: string, calls: [string, unknown[]][]): Promise<unknown[]> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: "2.0", id, method, params }))),
  });
  const answers = (await res.json()) as { id: number; result?: unknown; error?: { message: string } }[];
  return calls.map((_, id) => {
    const answer = answers.find((a) => a.id === id)!;
    if (answer.error) throw new Error(answer.error.message);
    return answer.result;
  });
}

describe("local chains answer a JSON-RPC batch's calls in order (scripts/lib/calls-in-order.ts)", function () {
  this.timeout(60_000);
  let chain: LocalChain;

  before(async () => {
    chain = await startLocalChain(hre, { chainId: 31_997 });
  });
  after(async () => {
    await chain?.close();
  });

  it("a receipt asked after a send in the same batch is the mined transaction's, every time; counts before and after it differ by one", async () => {
    const [sender, receiver] = testAccounts(2);
    const start = Number(
      ((await batch(chain.url, [["eth_getTransactionCount", [sender.address, "latest"]]])) as string[])[0],
    );
    for (let i = 0; i < 30; i++) {
      const raw = await sender.signTransaction({
        to: receiver.address,
        value: 1n,
        nonce: start + i,
        chainId: chain.chainId,
        type: 2,
        gasLimit: 21_000n,
        maxFeePerGas: 10n ** 10n,
        maxPriorityFeePerGas: 1n,
      });
      const hash = Transaction.from(raw).hash!;
      const [before, sent, receipt, after] = await batch(chain.url, [
        ["eth_getTransactionCount", [sender.address, "latest"]],
        ["eth_sendRawTransaction", [raw]],
        ["eth_getTransactionReceipt", [hash]],
        ["eth_getTransactionCount", [sender.address, "latest"]],
      ]);
      expect(sent, `send ${i}`).to.equal(hash);
      expect((receipt as { status?: string } | null)?.status, `receipt ${i}`).to.equal("0x1");
      expect([Number(before), Number(after)], `counts around send ${i}`).to.deep.equal([start + i, start + i + 1]);
    }
  });

  it("twenty reads in one batch answer alike, and a refused change does not hold up the calls after it", async () => {
    const [sender] = testAccounts(1);
    const reads = await batch(
      chain.url,
      Array.from({ length: 20 }, () => ["eth_getBalance", [sender.address, "latest"]] as [string, unknown[]]),
    );
    expect(new Set(reads).size).to.equal(1);
    const refused = await fetch(chain.url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 0, method: "eth_sendRawTransaction", params: ["0x02"] },
        { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] },
      ]),
    });
    const answers = (await refused.json()) as { id: number; result?: string; error?: unknown }[];
    expect(answers.find((a) => a.id === 0)!.error).to.not.equal(undefined);
    expect(answers.find((a) => a.id === 1)!.result).to.match(/^0x[0-9a-f]+$/);
  });
});
