import { expect } from "chai";
import { Wallet, getAddress } from "ethers";
import { checksumAddress } from "../../service/crypto/checksum-address";
import { address } from "../../service/wire/fields";

describe("checksumAddress: getAddress remembered", () => {
  it("answers what getAddress answers for lower, upper and checksummed input, the first time and again", () => {
    for (let i = 0; i < 20; i++) {
      const checksummed = Wallet.createRandom().address;
      const lower = checksummed.toLowerCase();
      const upper = "0x" + checksummed.slice(2).toUpperCase();
      for (let round = 0; round < 2; round++) {
        expect(checksumAddress(lower)).to.equal(checksummed);
        expect(checksumAddress(upper)).to.equal(getAddress(upper));
        expect(checksumAddress(checksummed)).to.equal(checksummed);
      }
    }
  });

  // Hardhat's account #1, and the same address with its first letter's case flipped (a wrong checksum).
  const ACCOUNT_1 = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
  const ONE_LETTER_FLIPPED = "0x70997970c51812dc3A010C7d01b50e0d17dc79C8";

  it("throws like getAddress on a wrong mixed-case checksum or a malformed address, every time (failures are not remembered)", () => {
    for (let round = 0; round < 2; round++) {
      expect(() => getAddress(ONE_LETTER_FLIPPED)).to.throw();
      expect(() => checksumAddress(ONE_LETTER_FLIPPED)).to.throw();
      expect(() => checksumAddress("0x1234")).to.throw();
    }
  });

  it("keeps answering correctly past its 10,000-entry bound (oldest forgotten, then recomputed)", () => {
    const wallets = Array.from({ length: 10_050 }, (_, i) => "0x" + i.toString(16).padStart(40, "0"));
    for (const w of wallets) checksumAddress(w);
    for (const w of [wallets[0], wallets[5_000], wallets[10_049]]) expect(checksumAddress(w)).to.equal(getAddress(w));
  });

  it("the request field uses it: a wrong mixed-case checksum is refused, lower case is normalized", () => {
    expect(address.parse(ACCOUNT_1.toLowerCase())).to.equal(ACCOUNT_1);
    expect(address.parse(ACCOUNT_1)).to.equal(ACCOUNT_1);
    expect(address.safeParse(ONE_LETTER_FLIPPED).success).to.equal(false);
  });
});
