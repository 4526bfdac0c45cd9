import { expect } from "chai";
import { NETWORKS, chainIdHex, parseChainId } from "../../service/chains/networks";

/** The network table and the codes clients send (docs/wire-conventions.md, Numbers, amounts and chain ids). */
const TABLE: { chainId: number; hexCode: string }[] = [
  { chainId: 1, hexCode: "1" },
  { chainId: 8453, hexCode: "2105" },
  { chainId: 56, hexCode: "38" },
  { chainId: 43114, hexCode: "a86a" },
  { chainId: 137, hexCode: "89" },
  { chainId: 11155111, hexCode: "aa36a7" },
  { chainId: 84532, hexCode: "14a34" },
  { chainId: 80002, hexCode: "13882" },
];

describe("chainId parsing (decimal, 0x hex, bare hex codes)", () => {
  it("the service's network table is exactly the eight networks clients know, with their hex codes", () => {
    const actual = NETWORKS.map((n) => ({ chainId: n.chainId, hexCode: n.hexCode })).sort(
      (a, b) => a.chainId - b.chainId,
    );
    expect(actual).to.deep.equal([...TABLE].sort((a, b) => a.chainId - b.chainId));
    for (const n of NETWORKS) expect(n.hexCode).to.equal(n.chainId.toString(16));
  });

  for (const { chainId, hexCode } of TABLE) {
    describe(`chain ${chainId} (${hexCode})`, () => {
      it("parses the decimal string", () => {
        expect(parseChainId(String(chainId))).to.equal(chainId);
      });

      it("parses 0x hex in lower and upper case", () => {
        const hex = chainId.toString(16);
        expect(parseChainId("0x" + hex)).to.equal(chainId);
        expect(parseChainId("0x" + hex.toUpperCase())).to.equal(chainId);
        expect(parseChainId("0X" + hex.toUpperCase())).to.equal(chainId);
      });

      it("parses the bare hex code of the table, in either case and with surrounding spaces", () => {
        expect(parseChainId(hexCode)).to.equal(chainId);
        expect(parseChainId(hexCode.toUpperCase())).to.equal(chainId);
        expect(parseChainId(` ${hexCode} `)).to.equal(chainId);
      });

      it("parses the JSON number", () => {
        expect(parseChainId(chainId)).to.equal(chainId);
      });

      it("chainIdHex gives the 0x form, which parses back", () => {
        expect(chainIdHex(chainId)).to.equal("0x" + hexCode);
        expect(parseChainId(chainIdHex(chainId))).to.equal(chainId);
      });
    });
  }

  it("resolves the bare codes the clients send to the table's chains", () => {
    expect(parseChainId("aa36a7")).to.equal(11155111);
    expect(parseChainId("14a34")).to.equal(84532);
    expect(parseChainId("2105")).to.equal(8453);
    expect(parseChainId("38")).to.equal(56);
    expect(parseChainId("89")).to.equal(137);
    expect(parseChainId("a86a")).to.equal(43114);
    expect(parseChainId("13882")).to.equal(80002);
    expect(parseChainId("1")).to.equal(1);
  });

  it("reads any other all-digit string as decimal, unchanged", () => {
    expect(parseChainId("31337")).to.equal(31337);
    expect(parseChainId("11155111")).to.equal(11155111);
    expect(parseChainId("84532")).to.equal(84532);
    expect(parseChainId("8453")).to.equal(8453);
    expect(parseChainId("10")).to.equal(10);
    expect(parseChainId("100")).to.equal(100);
  });

  it("reads other bare hex with letters as hex", () => {
    expect(parseChainId("7a69")).to.equal(31337);
    expect(parseChainId("7A69")).to.equal(31337);
    expect(parseChainId("a")).to.equal(10);
    expect(parseChainId("0x7a69")).to.equal(31337);
  });

  it("accepts a positive bigint", () => {
    expect(parseChainId(11155111n)).to.equal(11155111);
    expect(parseChainId(0n)).to.equal(undefined);
  });

  const invalid: [string, unknown][] = [
    ["empty string", ""],
    ["blank string", "   "],
    ["non-hex letters", "zz"],
    ["negative decimal", "-1"],
    ["zero", "0"],
    ["zero as 0x", "0x0"],
    ["bare 0x", "0x"],
    ["hex with a non-hex letter", "0xzz"],
    ["decimal with a fraction", "1.5"],
    ["null", null],
    ["undefined", undefined],
    ["an object", {}],
    ["an array", [11155111]],
    ["a boolean", true],
    ["a fractional number", 1.5],
    ["zero number", 0],
    ["negative number", -1],
    ["NaN", NaN],
    ["Infinity", Infinity],
    ["an unsafe integer", Number.MAX_SAFE_INTEGER + 1],
    ["hex beyond the safe integers", "0x" + "f".repeat(20)],
  ];
  for (const [label, input] of invalid) {
    it(`rejects ${label}`, () => {
      expect(parseChainId(input)).to.equal(undefined);
    });
  }
});
