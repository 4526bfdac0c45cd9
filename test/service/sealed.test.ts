import { expect } from "chai";
import { Sealer } from "../../service/crypto/sealed";

describe("Sealer (data encrypted at rest)", () => {
  const sealer = new Sealer("a".repeat(64));

  it("opens what it sealed for the same purpose, and the sealed text does not contain the plain text", () => {
    const plain = JSON.stringify({ signature: "0x" + "ab".repeat(65) });
    const sealed = sealer.seal(plain, "payment:1");
    expect(sealed).to.match(/^v1\./);
    expect(sealed).not.to.include("abab");
    expect(sealer.open(sealed, "payment:1")).to.equal(plain);
  });

  it("seals the same text differently each time (random IV)", () => {
    expect(sealer.seal("x", "p")).not.to.equal(sealer.seal("x", "p"));
  });

  it("refuses another purpose, another key, a tampered value and text that was never sealed", () => {
    const sealed = sealer.seal("secret", "payment:1");
    expect(() => sealer.open(sealed, "payment:2")).to.throw();
    expect(() => new Sealer("b".repeat(64)).open(sealed, "payment:1")).to.throw();
    const parts = sealed.split(".");
    parts[2] = Buffer.from("tampered").toString("base64url");
    expect(() => sealer.open(parts.join("."), "payment:1")).to.throw();
    expect(() => sealer.open("secret", "payment:1")).to.throw(/not a sealed value/);
  });
});
