import { expect } from "chai";
import { formatUnits } from "ethers";
import { fromUnits } from "../../service/model/units";

describe("fromUnits: base units to the human amount a response shows", () => {
  it("answers ethers' formatUnits without its trailing .0, for any size, sign and decimals", () => {
    const cases: [bigint, number, string][] = [
      [0n, 18, "0"],
      [10n ** 18n, 18, "1"],
      [15n * 10n ** 17n, 18, "1.5"],
      [1n, 18, "0.000000000000000001"],
      [123_450_000n, 6, "123.45"],
      [-2_500_000n, 6, "-2.5"],
      [42n, 0, "42"],
      [2n ** 256n - 1n, 18, "115792089237316195423570985008687907853269984665640564039457.584007913129639935"],
    ];
    for (const [units, decimals, shown] of cases)
      expect(fromUnits(units, decimals), `${units} @ ${decimals}`).to.equal(shown);
    // Seeded sweep against ethers itself.
    let seed = 7;
    const digit = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % 10);
    for (const decimals of [0, 1, 6, 8, 18, 30]) {
      for (let i = 0; i < 100; i++) {
        const units = BigInt(Array.from({ length: 1 + (i % 60) }, digit).join("")) * (i % 5 === 0 ? -1n : 1n);
        expect(fromUnits(units, decimals)).to.equal(formatUnits(units, decimals).replace(/\.0$/, ""));
      }
    }
  });

  it("refuses decimals that are not an ERC-20 uint8", () => {
    for (const decimals of [-1, 1.5, 256]) expect(() => fromUnits(1n, decimals)).to.throw(RangeError, "uint8");
    expect(fromUnits(1n, 255)).to.equal("0." + "0".repeat(254) + "1");
  });
});
