// tier: browser
import { execFileSync } from "node:child_process";
import { expect } from "chai";
import { chooseChromium } from "../helpers/browser";

describe("browser tests: which Chromium they drive", function () {
  this.timeout(180_000);

  it("without CHROMIUM_PATH or a system Chromium, the one shipped in @sparticuz/chromium, unpacked and runnable", async () => {
    const choice = await chooseChromium({}, ["/nonexistent/chromium"]);
    expect(choice.source).to.equal("@sparticuz/chromium");
    expect(choice.args).to.include("--no-sandbox");
    const version = execFileSync(choice.executablePath, ["--version"], { encoding: "utf8", timeout: 60_000 });
    expect(version).to.match(/Chromium \d+\./);
  });

  it("CHROMIUM_PATH wins, and must exist", async () => {
    const packaged = await chooseChromium({}, []);
    expect(await chooseChromium({ CHROMIUM_PATH: packaged.executablePath }, [])).to.include({
      source: "CHROMIUM_PATH",
      executablePath: packaged.executablePath,
    });
    await chooseChromium({ CHROMIUM_PATH: "/nonexistent/chromium" }).then(
      () => expect.fail("a missing CHROMIUM_PATH was accepted"),
      (error: Error) => expect(error.message).to.include("CHROMIUM_PATH=/nonexistent/chromium does not exist"),
    );
  });

  it("a system Chromium is preferred to the packaged one when present", async () => {
    const packaged = await chooseChromium({}, []);
    expect(await chooseChromium({}, ["/nonexistent/chromium", packaged.executablePath])).to.include({
      source: "system",
      executablePath: packaged.executablePath,
    });
  });
});
