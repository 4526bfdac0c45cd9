import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { TIERS, longestFirst, selectedTiers, tierOf, type Tier } from "../tiers";

const TEST_ROOT = path.resolve(__dirname, "..");

const testFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith(".test.ts") ? [full] : [];
  });

describe("test tiers (test/tiers.ts)", () => {
  it("puts every test file in one named tier, and every tier has files", () => {
    const counts = new Map<Tier, number>();
    for (const file of testFiles(TEST_ROOT)) {
      const tier = tierOf(file);
      counts.set(tier, (counts.get(tier) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).to.deep.equal(Object.keys(TIERS).sort());
  });

  it("keeps what needs a build, a browser, child processes or a server out of npm test", () => {
    const at = (file: string) => tierOf(path.join(TEST_ROOT, file));
    expect(at("service/production-build.test.ts")).to.equal("release");
    expect(at("service/npm-start.test.ts")).to.equal("release");
    expect(at("e2e/console-access.e2e.test.ts")).to.equal("browser");
    expect(at("e2e/process-lifecycle.e2e.test.ts")).to.equal("e2e");
    expect(at("e2e/chaos.e2e.test.ts")).to.equal("chaos");
    expect(at("postgres/store.test.ts")).to.equal("pg");
    expect(at("service/amounts.test.ts")).to.equal("fast");
  });

  it("refuses a header or a TEST_TIER that names no tier, instead of leaving files out", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tak-tiers-"));
    try {
      const file = path.join(dir, "x.test.ts");
      fs.writeFileSync(file, "// tier: nightly\n");
      expect(() => tierOf(file)).to.throw(/names no tier/);
      expect(() => selectedTiers({ TEST_TIER: "e2e,slow" })).to.throw(/TEST_TIER must name tiers among .*"slow"/);
      expect(selectedTiers({})).to.deep.equal(["fast"]);
      expect(selectedTiers({ TEST_TIER: "browser" })).to.deep.equal(["browser"]);
      expect(selectedTiers({ TEST_TIER: "e2e, chaos" })).to.deep.equal(["e2e", "chaos"]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts the longest files first by test/file-times.json, files it does not know last", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "tak-times-"));
    try {
      fs.mkdirSync(path.join(root, "test"));
      fs.writeFileSync(
        path.join(root, "test", "file-times.json"),
        JSON.stringify({ "test/a.test.ts": 3, "test/b.test.ts": 40 }),
      );
      const files = ["new", "a", "b"].map((name) => path.join(root, "test", `${name}.test.ts`));
      expect(longestFirst(files, root).map((f) => path.basename(f))).to.deep.equal([
        "b.test.ts",
        "a.test.ts",
        "new.test.ts",
      ]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
