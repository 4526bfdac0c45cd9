// tier: browser
import path from "node:path";
import { expect } from "chai";
import type { Browser } from "playwright-core";
import { apiDocument } from "../../service/app";
import type { Services } from "../../service/composition";
import { ERROR_CODE_LIST } from "../../service/error-codes";
import { ARTIFACTS, launchChromium } from "../helpers/browser";
import { getSandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

/**
 * GET /docs in a real browser (issue: the API explains itself): Swagger UI renders /openapi.json from assets the
 * service serves itself (nothing is fetched from anywhere else: the page works offline), the prepare-transactions
 * operation is there and opens on its request body, and a screenshot is saved as a test artifact.
 */
describe("e2e (browser): the API reference page at /docs", function () {
  this.timeout(120_000);
  let service: TestService;
  let browser: Browser;

  before(async () => {
    browser = await launchChromium();
    service = await startTestService(await getSandbox());
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  it("serves the document it is generated from, and the page's assets (a fixed list)", async () => {
    const served = await service.api.get("/openapi.json");
    expect(served.status).to.equal(200);
    expect(served.body).to.deep.equal(JSON.parse(JSON.stringify(apiDocument({ config: {} } as Services))));
    const page = await fetch(`${service.url}/docs`);
    expect(page.status).to.equal(200);
    expect(page.headers.get("content-type")).to.match(/^text\/html/);
    expect(page.headers.get("content-security-policy"))
      .to.include("default-src 'none'")
      .and.include("script-src 'self'")
      .and.include("connect-src 'self'");
    const html = await page.text();
    for (const asset of ["swagger-ui.css", "swagger-ui-bundle.js", "docs.js"]) {
      expect(html).to.include(`/docs/assets/${asset}`);
      const res = await fetch(`${service.url}/docs/assets/${asset}`);
      expect(res.status, asset).to.equal(200);
      expect((await res.arrayBuffer()).byteLength, asset).to.be.greaterThan(100);
    }
    const unknown = await service.api.get("/docs/assets/package.json");
    expect(unknown.status).to.equal(404);
  });

  it("renders in Chromium with no request leaving the service; the prepare-transactions operation opens on its request body (screenshot)", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const external: string[] = [];
    const errors: string[] = [];
    context.on("request", (request) => {
      if (!request.url().startsWith(service.url) && !request.url().startsWith("data:")) external.push(request.url());
    });
    const page = await context.newPage();
    page.on("pageerror", (error) => errors.push(error.message));
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text());
    });
    const response = await page.goto(`${service.url}/docs`);
    expect(response?.status()).to.equal(200);

    const operation = page.locator("#operations-write-prepareTransactions");
    await operation.waitFor({ timeout: 60_000 });
    expect(await page.locator(".info .title").first().textContent()).to.include("Tokenized-Asset Transaction API");
    // The catalogue of error codes, a table in the document's description, is on the page.
    const codes = page.locator(".info table").filter({ hasText: "METHOD_NOT_ALLOWED" });
    expect(await codes.locator("tbody tr").count()).to.equal(ERROR_CODE_LIST.length);
    expect(await codes.textContent())
      .to.include("CHAIN_UNAVAILABLE")
      .and.include("Retry-After");
    expect(await operation.locator(".opblock-summary-path").first().textContent()).to.include("/prepare-transactions");
    await operation.locator(".opblock-summary").first().click();
    await operation.locator(".opblock-section-request-body").waitFor({ timeout: 30_000 });
    const opened = (await operation.textContent()) ?? "";
    expect(opened).to.include("Request body");
    expect(opened).to.include("402");
    expect(opened).to.include("429");
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: path.join(ARTIFACTS, "docs-page.png") });
    await operation.screenshot({ path: path.join(ARTIFACTS, "docs-prepare-transactions.png") });

    expect(external, "requests that left the service").to.deep.equal([]);
    expect(errors, "page errors").to.deep.equal([]);
    await context.close();
  });
});
