import { expect } from "chai";
import { getAddress, id, keccak256, randomBytes, Transaction, Wallet } from "ethers";
import { useNativeKeccak } from "../../service/crypto/keccak";

/** ethers' own JavaScript keccak (what `keccak256` runs until something is registered). */
const javascriptKeccak = (data: Uint8Array): string => "0x" + Buffer.from(keccak256._(data)).toString("hex");

describe("engine: native keccak for ethers", () => {
  before(() => useNativeKeccak());

  it("is in use on linux-x64 (the platform CI runs on), and a second call answers as the first", function () {
    if (`${process.platform}-${process.arch}` !== "linux-x64") this.skip();
    expect(useNativeKeccak()).to.equal(true);
    expect(useNativeKeccak()).to.equal(true);
  });

  it("answers the known digest of empty input", () => {
    expect(keccak256("0x")).to.equal("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
  });

  it("hashes as the JavaScript keccak does, for empty, short, block-sized and long inputs and views into larger buffers", () => {
    for (const length of [0, 1, 20, 32, 135, 136, 137, 1000, 5000]) {
      const data = randomBytes(length);
      expect(keccak256(data)).to.equal(javascriptKeccak(data));
    }
    const backing = randomBytes(300);
    const view = backing.subarray(17, 217);
    expect(keccak256(view)).to.equal(javascriptKeccak(backing.slice(17, 217)));
  });

  it("gives ethers its known answers: an event topic, an EIP-55 checksum, a transaction hash", async () => {
    expect(id("Transfer(address,address,uint256)")).to.equal(
      "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
    );
    expect(getAddress("0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359")).to.equal(
      "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    );
    const wallet = Wallet.createRandom();
    const signed = await wallet.signTransaction({
      type: 2,
      chainId: 1,
      nonce: 3,
      to: wallet.address,
      gasLimit: 21000,
      maxFeePerGas: 2,
      maxPriorityFeePerGas: 1,
    });
    expect(Transaction.from(signed).hash).to.equal(javascriptKeccak(Buffer.from(signed.slice(2), "hex")));
  });
});
