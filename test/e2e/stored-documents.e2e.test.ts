// tier: browser
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { expect } from "chai";
import type { Browser } from "playwright-core";
import { REQUEST_LIMITS } from "../../service/auth/request-limits";
import { launchChromium } from "../helpers/browser";
import { execute } from "../helpers/flow";
import { distinctClient } from "../helpers/relayed";
import { getSandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";

/** A minimal valid PNG (1×1) and a PDF header: files of the kinds taken. */
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6300010000050001" +
    "0d0a2db40000000049454e44ae426082",
  "hex",
);
const PDF = Buffer.from("%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");

/**
 * Issue 41, item 1: stored content that cannot run. The attack: a key uploads an HTML document with a script as a token
 * document, and whoever opens /documents/{sha256} runs it on the API's origin (the investor's wallet-signing page's).
 * Now an upload is refused with 415 unless its first bytes are PDF, PNG, JPEG, WebP or plain text, before the rest of it
 * is read; and every document is served as an attachment under `Content-Security-Policy: sandbox` with `nosniff`, so
 * even a script stored by an older version, or hidden behind an image's first bytes or in a text file, never runs.
 */
describe("e2e (browser): uploaded documents cannot run on the API's origin", function () {
  this.timeout(180_000);
  let service: TestService;
  let browser: Browser;
  let owner: ApiClient;
  let other: ApiClient;
  let symbol: string;
  const marker = `ran-${randomBytes(6).toString("hex")}`;
  /** A document whose script, if it ever runs, asks the service for the marker path. */
  const page = (title: string) =>
    `<!doctype html><html><head><title>${title}</title></head><body><script>fetch("/${marker}?" + document.domain); document.title = "${marker}";</script></body></html>`;

  before(async () => {
    const sandbox = await getSandbox();
    browser = await launchChromium();
    service = await startTestService(sandbox);
    const ownerKey = await service.services.apiKeys.create({ email: "owner@documents.test", plan: "Enterprise" });
    owner = service.api.withKey(ownerKey.key);
    other = service.api.withKey(
      (await service.services.apiKeys.create({ email: "other@documents.test", plan: "Enterprise" })).key,
    );
    const issuer = sandbox.accounts[3];
    await service.services.signers.add(issuer.address, { keyId: ownerKey.record.id });
    symbol = `D${randomBytes(2).toString("hex").toUpperCase()}`;
    await execute(owner, issuer, {
      method: "newTokenization",
      chainId: "aa36a7",
      tokenizerEmail: `issuer-${symbol}@documents.test`,
      name: "Documents",
      tokenSymbol: symbol,
    });
  });
  after(async () => {
    await browser?.close();
    await service?.stop();
  });

  const upload = async (
    client: ApiClient,
    files: Record<string, [Buffer, string, string]>,
    tokenSymbol = symbol,
    headers: Record<string, string> = {},
  ) => {
    const form = new FormData();
    form.append("tokenSymbol", tokenSymbol);
    for (const [field, [bytes, type, name]] of Object.entries(files))
      form.append(field, new Blob([bytes], { type }), name);
    const res = await fetch(`${service.url}/patch-token-docs`, {
      method: "PATCH",
      headers: { "x-api-key": client.apiKey!, ...headers },
      body: form,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
  };

  /** Opens `url` in a fresh browser context and answers whether the document's script ran (its request or its title). */
  const opened = async (url: string) => {
    const context = await browser.newContext({ acceptDownloads: true });
    const requests: string[] = [];
    context.on("request", (request) => requests.push(request.url()));
    const tab = await context.newPage();
    const navigation = await tab.goto(url, { waitUntil: "load", timeout: 10_000 }).catch((error: Error) => error);
    await tab.waitForTimeout(500);
    const title = await tab.title().catch(() => "");
    await context.close();
    return {
      ran: requests.some((r) => r.includes(marker)) || title === marker,
      downloaded: navigation instanceof Error && /download/i.test(navigation.message),
    };
  };

  it("an HTML upload is refused with 415 naming the types taken; nothing is stored and no credit is spent", async () => {
    const html = Buffer.from(page("invoice"));
    const ownerId = (await service.services.apiKeys.verify(owner.apiKey!))!.id;
    const creditsBefore = (await service.services.credits.balances(ownerId))["patch-token-docs"];
    for (const [bytes, type, name] of [
      [html, "text/html", "invoice.html"],
      [html, "application/pdf", "invoice.pdf"], // the declared type is not believed
      [Buffer.concat([Buffer.from(" \n\t"), html]), "text/plain", "notes.txt"], // markup is not plain text
      [Buffer.from(`Terms of the offering.\n<script>fetch("/${marker}")</script>\n`), "text/plain", "terms.txt"],
      [
        Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><script>fetch("/${marker}")</script></svg>`),
        "image/svg+xml",
        "logo.svg",
      ],
      [Buffer.from([0x00, 0x01, 0x02, 0x03]), "application/octet-stream", "blob.bin"],
    ] as const) {
      const res = await upload(owner, { legalDocs: [bytes, type, name] });
      expect(res.status, `${name} ${JSON.stringify(res.body)}`).to.equal(415);
      expect(res.body.error.code).to.equal("UNSUPPORTED_MEDIA_TYPE");
      expect(res.body.message).to.match(/^legalDocs: .*PDF, PNG, JPEG, WebP or plain text/);
      const sha = createHash("sha256").update(bytes).digest("hex");
      expect((await fetch(`${service.url}/documents/${sha}`)).status, `${name} was not stored`).to.equal(404);
    }
    expect((await service.services.credits.balances(ownerId))["patch-token-docs"]).to.equal(creditsBefore);
  });

  it("documents are served as attachments under a sandbox policy with nosniff and the type their bytes show; a script stored by an older version or behind a PNG's first bytes never runs in the browser", async () => {
    // What an older version stored with the uploader's type (the database row as it wrote it).
    const legacy = Buffer.from(page("legacy"));
    const legacySha = (
      await service.services.db.transaction((q) => service.services.documents.put(q, legacy, "text/html"))
    ).slice("sha256:".length);
    const polyglot = Buffer.concat([PNG, Buffer.from(page("polyglot"))]);
    const text = Buffer.from("Subscription terms: 1 < 2 and a > b hold; nothing here is markup.\n");
    const res = await upload(owner, {
      tokenLogotype: [polyglot, "text/html", "logo.html"],
      subscriptionAgreement: [PDF, "application/pdf", "sa.pdf"],
      legalDocs: [text, "text/html", "legal.html"],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const shaOf = (ref: string) => ref.slice("sha256:".length);
    const served = {
      legacy: { sha: legacySha, type: "application/octet-stream", ext: "bin" },
      polyglot: { sha: shaOf(res.body.tokenLogotypeRef), type: "image/png", ext: "png" },
      pdf: { sha: shaOf(res.body.subscriptionAgreementRef), type: "application/pdf", ext: "pdf" },
      text: { sha: shaOf(res.body.legalDocsRef), type: "text/plain; charset=utf-8", ext: "txt" },
    };
    for (const [label, { sha, type, ext }] of Object.entries(served)) {
      const answer = await fetch(`${service.url}/documents/${sha}`);
      expect(answer.status, label).to.equal(200);
      expect(answer.headers.get("content-type"), label).to.equal(type);
      expect(answer.headers.get("content-disposition"), label).to.equal(`attachment; filename="${sha}.${ext}"`);
      expect(answer.headers.get("content-security-policy"), label).to.match(/^sandbox(;|$)/);
      expect(answer.headers.get("x-content-type-options"), label).to.equal("nosniff");
      await answer.arrayBuffer();
      const visit = await opened(`${service.url}/documents/${sha}`);
      expect(visit.ran, `${label}: the document's script ran on the API's origin`).to.equal(false);
    }
    // The browser and the marker work: the same page served as HTML by a server of the test's own runs its script.
    const control = http.createServer((_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(page("control")),
    );
    await new Promise<void>((resolve) => control.listen(0, "127.0.0.1", resolve));
    try {
      expect((await opened(`http://127.0.0.1:${(control.address() as { port: number }).port}/`)).ran).to.equal(true);
    } finally {
      control.close();
    }
  });

  /** Sends a multipart upload's start and keeps the request open: the answer must come before the rest of the body. */
  const answeredBeforeBody = (headers: Record<string, string>, head: Buffer, declaredLength: number) =>
    new Promise<{ status: number; body: any; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const url = new URL(`${service.url}/patch-token-docs`);
      const request = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: "PATCH",
          headers: { ...headers, "content-length": String(declaredLength) },
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (text += chunk));
          res.on("end", () => {
            request.destroy();
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(text), ms: Date.now() - started });
          });
        },
      );
      request.on("error", (error) => (Date.now() - started > 0 ? undefined : reject(error)));
      request.write(head);
      setTimeout(() => reject(new Error("no answer while the body was still open")), 10_000).unref();
    });
  const boundary = "----tak-test-boundary";
  const part = (name: string, body: string, filename?: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: application/pdf` : ""}\r\n\r\n${body}`;

  it("size, type, credit and the token's key are checked before the body is read: each refusal answers while the upload is still open", async () => {
    const headersOf = (client: ApiClient) => ({
      "x-api-key": client.apiKey!,
      "content-type": `multipart/form-data; boundary=${boundary}`,
    });
    const tooLarge = await answeredBeforeBody(
      headersOf(owner),
      Buffer.from(part("tokenSymbol", symbol)),
      40 * 1024 * 1024,
    );
    expect(tooLarge.status, JSON.stringify(tooLarge.body)).to.equal(413);
    expect(tooLarge.body.error.code).to.equal("PAYLOAD_TOO_LARGE");

    const htmlStart = Buffer.from(
      `${part("tokenSymbol", symbol)}\r\n${part("legalDocs", "<html><body>" + "x".repeat(600), "a.pdf")}`,
    );
    const wrongType = await answeredBeforeBody(headersOf(owner), htmlStart, 5 * 1024 * 1024);
    expect(wrongType.status, JSON.stringify(wrongType.body)).to.equal(415);
    expect(wrongType.body.error.param ?? wrongType.body.error.details.field).to.equal("legalDocs");

    const pdfStart = Buffer.from(
      `${part("tokenSymbol", symbol)}\r\n${part("legalDocs", "%PDF-1.7\n" + "x".repeat(600), "a.pdf")}`,
    );
    const foreign = await answeredBeforeBody(headersOf(other), pdfStart, 5 * 1024 * 1024);
    expect(foreign.status, JSON.stringify(foreign.body)).to.equal(403);
    expect(foreign.body.message).to.match(/Unauthorized token symbol/);

    const broke = await service.services.apiKeys.create({ email: "broke@documents.test", plan: "Starter" });
    const credits = (await service.services.credits.balances(broke.record.id))["patch-token-docs"];
    await service.services.db.query(
      "INSERT INTO credit_balances (key_id, method, balance) VALUES ($1, 'patch-token-docs', 0) ON CONFLICT (key_id, method) DO UPDATE SET balance = 0",
      [broke.record.id],
    );
    expect(credits).to.be.above(0);
    const spent = await answeredBeforeBody(headersOf(service.api.withKey(broke.key)), pdfStart, 5 * 1024 * 1024);
    expect(spent.status, JSON.stringify(spent.body)).to.equal(403);
    expect(spent.body.error.code).to.equal("OUT_OF_CREDITS");
  });

  it(`uploads are rate limited per key (${REQUEST_LIMITS.uploadsPerKey.points} a minute) and per client IP (${REQUEST_LIMITS.uploadsPerIp.points}): the next answers 429 with Retry-After`, async () => {
    const pdf = { legalDocs: [PDF, "application/pdf", "sa.pdf"] as [Buffer, string, string] };
    const fresh = service.api.withKey(
      (await service.services.apiKeys.create({ email: "busy@documents.test", plan: "Enterprise" })).key,
    );
    const answers: number[] = [];
    // Each from another address, so only the key's limit counts; each is refused for the token (another key's) once admitted.
    for (let i = 0; i < REQUEST_LIMITS.uploadsPerKey.points; i++)
      answers.push((await upload(fresh, pdf, symbol, distinctClient())).status);
    expect(
      answers.every((s) => s === 403),
      answers.join(),
    ).to.equal(true);
    const last = await upload(fresh, pdf, symbol, distinctClient());
    expect(last.status).to.equal(429);
    expect(last.body.message).to.match(/per API key/);
    expect(Number(last.headers.get("retry-after"))).to.be.within(1, 60);

    // One address, several keys: the address's limit.
    const address = distinctClient();
    const keys = await Promise.all(
      [1, 2, 3].map(async (i) =>
        service.api.withKey(
          (await service.services.apiKeys.create({ email: `busy${i}@documents.test`, plan: "Enterprise" })).key,
        ),
      ),
    );
    const perIp: number[] = [];
    for (let i = 0; i <= REQUEST_LIMITS.uploadsPerIp.points; i++)
      perIp.push((await upload(keys[i % 3], pdf, symbol, address)).status);
    expect(
      perIp.slice(0, -1).every((s) => s !== 429),
      perIp.join(),
    ).to.equal(true);
    expect(perIp.at(-1)).to.equal(429);
    expect(perIp.filter((s) => s === 429)).to.have.length(1);
  });
});
