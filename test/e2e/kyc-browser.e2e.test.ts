// tier: browser
import path from "node:path";
import { expect } from "chai";
import { getBytes, toUtf8String, Wallet } from "ethers";
import type { Browser } from "playwright-core";
import { runAdminCommand } from "../../service/operator/commands";
import { ARTIFACTS, launchChromium } from "../helpers/browser";
import { getSandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";

describe("e2e (browser): the investor opens its link, fills the form and signs with its wallet", function () {
  this.timeout(120_000);
  let service: TestService;
  let api: ApiClient;
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
    service = await startTestService(await getSandbox());
    const { key } = await service.services.apiKeys.create({ email: "ops@browser.test", plan: "Starter" });
    api = service.api.withKey(key);
  });

  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it("link → page → EIP-1193 wallet signs → submitted, and the service stored the wallet the signature proves", async () => {
    const email = `ada-${Date.now()}@browser.test`;
    const invited = await api.post("/create-kyc-link", { email });
    expect(invited.status, JSON.stringify(invited.body)).to.equal(200);
    const url: string = invited.body.url;

    // The test wallet's key stays in this process: the page's provider asks it to sign through a binding.
    const wallet = Wallet.createRandom();
    const signed: string[] = [];
    const context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
    const externalRequests: string[] = [];
    context.on("request", (request) => {
      if (!request.url().startsWith(service.url)) externalRequests.push(request.url());
    });
    await context.exposeBinding("__testWalletSign", async (_source, hexMessage: string, account: string) => {
      if (account.toLowerCase() !== wallet.address.toLowerCase()) throw new Error(`asked to sign for ${account}`);
      const message = toUtf8String(getBytes(hexMessage));
      signed.push(message);
      return wallet.signMessage(message);
    });
    await context.addInitScript((address: string) => {
      const w = globalThis as unknown as {
        ethereum: unknown;
        __testWalletSign(hex: string, account: string): Promise<string>;
      };
      w.ethereum = {
        isTestWallet: true,
        async request({ method, params }: { method: string; params?: unknown[] }) {
          switch (method) {
            case "eth_requestAccounts":
            case "eth_accounts":
              return [address.toLowerCase()];
            case "eth_chainId":
              return "0xaa36a7";
            case "personal_sign":
              return w.__testWalletSign(String(params![0]), String(params![1]));
            default:
              throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 });
          }
        },
      };
    }, wallet.address);

    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(message.text());
    });
    const response = await page.goto(url);
    expect(response?.status()).to.equal(200);
    expect(await page.inputValue("#email")).to.equal(email);
    await page.fill("#firstName", "Ada");
    await page.fill("#lastName", "Lovelace");
    await page.selectOption("#country", "GB");
    await page.screenshot({ path: path.join(ARTIFACTS, "kyc-form.png"), fullPage: true });
    await page.click("#submit");
    await page.waitForSelector("#status.success, #status.error", { timeout: 20_000 });
    const status = await page.textContent("#status");
    await page.screenshot({ path: path.join(ARTIFACTS, "kyc-submitted.png"), fullPage: true });
    expect(await page.getAttribute("#status", "class"), status ?? "").to.equal("success");
    expect(status).to.include(wallet.address);
    expect(pageErrors).to.deep.equal([]);
    expect(externalRequests).to.deep.equal([]);

    // What the wallet was asked to sign: a human-readable EIP-4361 message for this service, this link and these details.
    expect(signed).to.have.length(1);
    const host = new URL(service.url).host;
    expect(signed[0]).to.match(
      new RegExp(
        `^${host.replace(/\./g, "\\.")} wants you to sign in with your Ethereum account:\n${wallet.address}\n`,
      ),
    );
    expect(signed[0]).to.include(`Register this wallet for investor onboarding (KYC) as ${email}.`);
    expect(signed[0])
      .to.include("Chain ID: 11155111")
      .and.include("urn:kyc:first-name:Ada")
      .and.include("urn:kyc:country:GB");
    expect(signed[0]).to.match(/\nNonce: [A-Za-z0-9]{17}\nIssued At: \S+\nExpiration Time: \S+\n/);

    const [record] = await service.services.kyc.list({ email });
    expect(record).to.include({
      status: "submitted",
      firstName: "Ada",
      lastName: "Lovelace",
      country: "GB",
      walletAddress: wallet.address,
      proofMessage: signed[0],
    });
    const listed = await api.get("/get-investors", { kycStatus: "submitted" });
    expect(listed.body.investors[0]).to.include({
      email,
      kycStatus: "submitted",
      kycWalletAddress: wallet.address,
      kycUrl: null,
    });

    // The used link now shows where the onboarding stands: under review, then the decision.
    const waiting = await page.goto(url);
    expect(waiting?.status()).to.equal(200);
    expect(await page.textContent("h1")).to.equal("Your details are being reviewed");
    await runAdminCommand(service.services, { command: "kyc.approve", email });
    expect((await api.get("/get-investors")).body.investors[0]).to.include({ kycStatus: "approved" });
    await page.goto(url);
    expect(await page.textContent("h1")).to.equal("Your onboarding is approved");
    expect(await page.textContent("p.lead")).to.include(wallet.address);
    await page.screenshot({ path: path.join(ARTIFACTS, "kyc-link-used.png"), fullPage: true });
    const json = await api.get(
      "/kyc",
      { token: new URL(url).searchParams.get("token")! },
      { accept: "application/json" },
    );
    expect(json.status).to.equal(410);
    expect(json.body.error.code).to.equal("LINK_USED");
    await context.close();
  });

  it("without a browser wallet the page says so and submits nothing", async () => {
    const email = `nowallet-${Date.now()}@browser.test`;
    const { body } = await api.post("/create-kyc-link", { email });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(body.url);
    await page.fill("#firstName", "Grace");
    await page.fill("#lastName", "Hopper");
    await page.selectOption("#country", "US");
    await page.click("#submit");
    await page.waitForSelector("#status.error");
    expect(await page.textContent("#status")).to.include("No browser wallet was found");
    const [record] = await service.services.kyc.list({ email });
    expect(record).to.include({ status: "invited", walletAddress: null });
    await context.close();
  });
});
