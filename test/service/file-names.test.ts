import { execFileSync } from "node:child_process";
import path from "node:path";
import { expect } from "chai";

const ROOT = path.join(__dirname, "..", "..");

/** A kebab-case name: lower-case words and digits joined by hyphens, in each dot-separated part. */
const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*(\.[a-z0-9]+(-[a-z0-9]+)*)*$/;

/**
 * Names that keep another convention, each for a reason: contract sources and their deployments keep their Solidity and
 * chain-id names; a migration's file name is the version every deployed database recorded (NNN_name.sql); README.md
 * and ARCHITECTURE.md are the names readers look for; dotfiles are the tools' own.
 */
function exempt(file: string): boolean {
  const base = path.basename(file);
  return (
    /^(contracts|deployments)\//.test(file) ||
    /^service\/store\/migrations\/\d{3}_[a-z0-9_]+\.sql$/.test(file) ||
    base === "README.md" ||
    base === "ARCHITECTURE.md" ||
    base.startsWith(".")
  );
}

describe("file names", () => {
  it("are kebab-case everywhere but where another convention is the point", () => {
    const files = execFileSync("git", ["ls-files"], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean);
    expect(files.length).to.be.greaterThan(300);
    const offenders = files.filter((file) => !exempt(file) && !KEBAB.test(path.basename(file)));
    expect(offenders, `files not named in kebab-case:\n${offenders.join("\n")}\n`).to.deep.equal([]);
  });

  it("the rule tells camelCase and PascalCase from kebab-case", () => {
    expect(
      ["agentRegister.ts", "USDC.test.ts", "stoEscrow.property.test.ts"].filter((n) => KEBAB.test(n)),
    ).to.deep.equal([]);
    expect(
      ["agent-register.ts", "usdc.test.ts", "sto-escrow.property.test.ts", "multicall3.test.ts"].every((n) =>
        KEBAB.test(n),
      ),
    ).to.equal(true);
  });
});
