import { expect } from "chai";
import { Wallet } from "ethers";
import { revertCause } from "../../service/engine/runner-ending";

/**
 * Whose failure a mined revert is (engine/runner-ending.ts revertCause): the payer's call reverted on the chain as it stood
 * (charged), unless a relayed transaction used every unit of the gas the service signed it with (ran out of gas: the
 * service's estimate, so the payment is owed back).
 */
describe("engine: whose failure a mined revert is", () => {
  const wallet = Wallet.createRandom();
  const signed = (gasLimit: bigint) =>
    wallet.signTransaction({
      to: Wallet.createRandom().address,
      data: "0x12345678",
      nonce: 0,
      chainId: 84532,
      type: 2,
      gasLimit,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
  const unsigned = { gasLimit: "0x30d40" } as never; // 200,000: what was prepared

  it("a relayed transaction that reverted with gas left: the payer's (its call reverted)", async () => {
    const tx = { signedRaw: await signed(150_000n), unsigned };
    expect(revertCause({ executionMode: "service-relayed" }, tx, { gasUsed: 43_210n })).to.equal("payer");
  });

  it("a relayed transaction that used all the gas it was signed with (not what was prepared): ours", async () => {
    const tx = { signedRaw: await signed(150_000n), unsigned };
    expect(revertCause({ executionMode: "service-relayed" }, tx, { gasUsed: 150_000n })).to.equal("ours");
    expect(revertCause({ executionMode: "service-relayed" }, tx, { gasUsed: 149_999n })).to.equal("payer");
  });

  it("a client-signed transaction is the client's, whatever gas it used (its wallet chose the limit)", async () => {
    const tx = { signedRaw: await signed(150_000n), unsigned };
    expect(revertCause({ executionMode: "client-signed" }, tx, { gasUsed: 150_000n })).to.equal("payer");
    expect(
      revertCause({ executionMode: "client-broadcast" }, { signedRaw: null, unsigned }, { gasUsed: 200_000n }),
    ).to.equal("payer");
  });

  it("without its bytes (cleared once the batch ended), the prepared limit is the one compared", () => {
    expect(
      revertCause({ executionMode: "service-relayed" }, { signedRaw: null, unsigned }, { gasUsed: 200_000n }),
    ).to.equal("ours");
  });
});
