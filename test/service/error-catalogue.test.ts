import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { Wallet } from "ethers";
import { apiDocument } from "../../service/app";
import type { Services } from "../../service/composition";
import { ERROR_CODES, ERROR_CODE_LIST, isErrorCode } from "../../service/error-codes";
import { closestName, editDistance } from "../../service/wire/near-names";
import { execute, prepareAndSign } from "../helpers/flow";
import { getSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type ApiClient, type TestService } from "../helpers/service";

const SERVICE_DIR = path.join(__dirname, "../../service");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The first argument of every `new ApiError(` in `source` (up to its first top-level comma). */
function firstArguments(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/new ApiError\(/g)) {
    let depth = 0;
    let i = match.index + match[0].length;
    const start = i;
    for (; i < source.length; i++) {
      const c = source[i];
      if ("([{".includes(c)) depth++;
      else if (")]}".includes(c)) {
        if (depth === 0) break;
        depth--;
      } else if (c === "," && depth === 0) break;
    }
    found.push(source.slice(start, i).trim());
  }
  return found;
}

describe("error catalogue: one table of codes, published, and the only source of codes", () => {
  // Building the document reads nothing from the services (as for `npm run client:generate`).
  const doc = apiDocument({ config: {} } as Services) as any;

  it("every code has an HTTP error status and a one-line meaning", () => {
    expect(ERROR_CODE_LIST.length).to.be.greaterThan(20);
    for (const code of ERROR_CODE_LIST) {
      const { status, meaning } = ERROR_CODES[code];
      expect(code).to.match(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/);
      expect(status, code).to.be.within(400, 599);
      expect(meaning, code).to.be.a("string").and.not.match(/\n/);
      expect(meaning.length, code).to.be.within(10, 160);
    }
  });

  it("/openapi.json publishes the catalogue: the ErrorCode enum and x-error-codes equal the table, the error body references it and has param", () => {
    const schema = doc.components.schemas.ErrorCode;
    expect(schema.enum).to.deep.equal(Object.keys(ERROR_CODES));
    expect(schema["x-error-codes"]).to.deep.equal(ERROR_CODES);
    const error = doc.components.schemas.Error.properties.error;
    expect(error.properties.code).to.deep.equal({ $ref: "#/components/schemas/ErrorCode" });
    expect(error.properties.param.type).to.equal("string");
    expect(error.required).to.not.include("param");
  });

  it("the reference page (/docs renders the document's description) lists every code with its status and meaning", () => {
    const description: string = doc.info.description;
    expect(description).to.include("### Error codes");
    for (const code of ERROR_CODE_LIST) {
      expect(description, code).to.include(
        `| \`${code}\` | ${ERROR_CODES[code].status} | ${ERROR_CODES[code].meaning} |`,
      );
    }
    expect(doc.components.schemas.ErrorCode.description).to.include("| `METHOD_NOT_ALLOWED` | 405 |");
  });

  it("no ApiError in service/ is built with a code outside the catalogue (source scan), and no code is written outside it twice over", () => {
    const outside: string[] = [];
    let built = 0;
    for (const file of sourceFiles(SERVICE_DIR)) {
      const source = fs.readFileSync(file, "utf8");
      const where = path.relative(SERVICE_DIR, file);
      for (const argument of firstArguments(source)) {
        built++;
        const literal = /^"([^"]*)"$/.exec(argument)?.[1];
        // A code is a catalogue literal, or a value typed ErrorCode (the link problems' table; the hint keeps a code).
        if (literal !== undefined ? !isErrorCode(literal) : !["p.code", "error.code"].includes(argument))
          outside.push(`${where}: new ApiError(${argument}, …)`);
      }
      // The status comes with the code: a status before it (the old constructor) or an error body built by hand is a bypass.
      if (/new ApiError\(\s*\d/.test(source)) outside.push(`${where}: new ApiError(<status>, …)`);
      if (file !== path.join(SERVICE_DIR, "wire/responses.ts") && /\bjson\(\{\s*error:/.test(source))
        outside.push(`${where}: an error body built by hand`);
      // `code: "X"` tables (the link problems) hold catalogue codes only.
      for (const m of source.matchAll(/\bcode: "([A-Z][A-Z0-9_]+)"/g))
        if (!isErrorCode(m[1])) outside.push(`${where}: code "${m[1]}"`);
    }
    expect(outside, outside.join("\n")).to.deep.equal([]);
    expect(built).to.be.greaterThan(15);
  });

  it("a misspelling is recognised by edit distance; short names only by letter case", () => {
    expect(editDistance("tokenSymbl", "tokenSymbol")).to.equal(1);
    expect(editDistance("tokneSymbol", "tokenSymbol")).to.equal(1); // transposition
    expect(closestName("tokenSymbl", ["tokenSymbol", "symbol", "name"])).to.equal("tokenSymbol");
    expect(closestName("TokenSymbol", ["tokenSymbol"])).to.equal("tokenSymbol");
    expect(closestName("tx", ["to"])).to.equal(undefined);
    expect(closestName("chain", ["chainId"])).to.equal("chainId");
    expect(closestName("serviceName", ["tokenSymbol", "name"])).to.equal(undefined);
  });
});

describe("error catalogue: the errors a new user meets, over HTTP", function () {
  this.timeout(120_000);
  let sandbox: Sandbox;
  let service: TestService;
  let api: ApiClient;
  let issuer: Wallet;
  const chainId = "aa36a7";
  const symbol = "ECAT";

  before(async () => {
    sandbox = await getSandbox();
    service = await startTestService(sandbox);
    issuer = sandbox.accounts[1];
    const { key } = await service.services.apiKeys.create({ email: "ops@catalogue.test", plan: "Starter" });
    api = service.api.withKey(key);
    await service.services.signers.add(issuer.address, "all-keys");
    await execute(api, issuer, {
      method: "newTokenization",
      chainId,
      tokenizerEmail: "issuer@catalogue.test",
      name: "Catalogue Inc",
      tokenSymbol: symbol,
    });
  });
  after(async () => service?.stop());

  const whitelist = (extra: Record<string, unknown> = {}) => ({
    method: "whitelist",
    chainId,
    signerAddress: issuer.address,
    tokenSymbol: symbol,
    userToWhitelist: [
      { investorAddress: sandbox.accounts[9].address, investorEmail: "w@catalogue.test", whitelistStatus: true },
    ],
    ...extra,
  });

  /** Invalid input has one shape: BAD_REQUEST, param, details.field and details.issues. */
  function expectInvalid(res: { status: number; body: any }, param: string, message: string | RegExp) {
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal("BAD_REQUEST");
    expect(res.body.error.param).to.equal(param);
    expect(res.body.error.details.field).to.equal(param);
    expect(res.body.error.details.issues).to.be.an("array").with.length.greaterThan(0);
    expect(res.body.error.details.issues[0].field).to.equal(param);
    if (typeof message === "string") expect(res.body.message).to.equal(message);
    else expect(res.body.message).to.match(message);
    expect(res.body.error.message).to.equal(res.body.message);
  }

  it("a missing field answers the same way whether the schema or the method finds it", async () => {
    const { tokenSymbol: _t, ...noSymbol } = whitelist();
    expectInvalid(await api.post("/prepare-transactions", noSymbol), "tokenSymbol", "tokenSymbol is required"); // the method's schema
    // newTokenization checks tokenSymbol in its own code (the schema lets `symbol` stand in for it)
    const created = await api.post("/prepare-transactions", {
      method: "newTokenization",
      chainId,
      signerAddress: issuer.address,
      tokenizerEmail: "x@catalogue.test",
      name: "X",
    });
    expectInvalid(created, "tokenSymbol", "tokenSymbol is required");
    expect(created.body.error.details.issues).to.deep.equal([{ field: "tokenSymbol", message: "is required" }]);
    // a route's own schema (GET query)
    expectInvalid(await api.get("/get-dividend-distribution", {}), "tokenSymbol", "tokenSymbol is required");
    const { method: _m, ...noMethod } = whitelist();
    expectInvalid(await api.post("/prepare-transactions", noMethod), "method", "method is required");
  });

  it("a misspelled field is named, with the field it was probably meant to be; unknown keys clients send stay accepted", async () => {
    const { tokenSymbol: _t, ...rest } = whitelist();
    const res = await api.post("/prepare-transactions", { ...rest, tokenSymbl: symbol });
    expectInvalid(
      res,
      "tokenSymbol",
      "tokenSymbol is required. Received unknown parameter: tokenSymbl. Did you mean tokenSymbol?",
    );
    expect(res.body.error.details).to.include({ unknownParameter: "tokenSymbl", didYouMean: "tokenSymbol" });
    // nested: userToWhitelist.0.investorAdress
    const nested = await api.post(
      "/prepare-transactions",
      whitelist({ userToWhitelist: [{ investorAdress: sandbox.accounts[9].address, whitelistStatus: true }] }),
    );
    expectInvalid(
      nested,
      "userToWhitelist.0.investorAddress",
      /^userToWhitelist\.0\.investorAddress is required\. Received unknown parameter: userToWhitelist\.0\.investorAdress\. Did you mean investorAddress\?$/,
    );
    // on a query too
    expectInvalid(
      await api.get("/get-dividend-distribution", { tokenSymbl: symbol }),
      "tokenSymbol",
      "tokenSymbol is required. Received unknown parameter: tokenSymbl. Did you mean tokenSymbol?",
    );
    // the raw option keys of the CLI still pass untouched, misspelling-like or not
    const ok = await api.post(
      "/prepare-transactions",
      whitelist({ chain: "sepolia", serviceName: "x", tag: ["a"], spender: issuer.address, email: "e@x.co" }),
    );
    expect(ok.status, JSON.stringify(ok.body)).to.equal(200);
  });

  it("a strict body names an unknown key and the closest known field (Received unknown parameter)", async () => {
    const res = await service.api.post("/kyc/message", {
      tokne: "x",
      firstName: "A",
      lastName: "B",
      country: "DE",
      walletAddress: issuer.address,
      chainId: 11155111,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal("BAD_REQUEST");
    const unknown = res.body.error.details.issues.find((i: { field: string }) => i.field === "tokne");
    expect(unknown).to.deep.equal({ field: "tokne", message: "is not a known parameter (did you mean token?)" });
  });

  it("chainId=sepolia lists the accepted forms and the chains served, and guesses the id meant", async () => {
    const res = await api.post("/prepare-transactions", whitelist({ chainId: "sepolia" }));
    expectInvalid(
      res,
      "chainId",
      /^Unsupported chainId: sepolia\. Did you mean 11155111 \(Sepolia\)\? chainId is a decimal number \(11155111\), 0x hex \(0xaa36a7\) or the network's hex code \(aa36a7\); this deployment serves 11155111 \(Sepolia\), 84532 \(Base Sepolia\)$/,
    );
    const read = await service.api.get("/get-network-info", { chainId: "nochain" });
    expectInvalid(read, "chainId", /^Unsupported chainId: nochain\. chainId is a decimal number/);
  });

  it("a form-encoded (or untyped) body on a JSON route: 415 naming the content type to send", async () => {
    const form = await fetch(`${service.url}/prepare-transactions`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-api-key": api.apiKey! },
      body: "method=whitelist&chainId=aa36a7",
    });
    const body = (await form.json()) as any;
    expect(form.status, JSON.stringify(body)).to.equal(415);
    expect(body.error.code).to.equal("UNSUPPORTED_MEDIA_TYPE");
    expect(body.message).to.equal(
      "POST /prepare-transactions reads a JSON body: send it with Content-Type: application/json, not application/x-www-form-urlencoded",
    );
    expect(body.error.details).to.deep.equal({
      contentType: "application/x-www-form-urlencoded",
      expected: "application/json",
    });
    const text = await fetch(`${service.url}/send-transactions`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(text.status).to.equal(415);
    // JSON with a charset, +json, and a body-less POST are unaffected
    const typed = await fetch(`${service.url}/send-transactions`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body: "{}",
    });
    expect(((await typed.json()) as any).error.code).to.equal("BAD_REQUEST");
  });

  it("a method a path does not answer: 405 with Allow (both ways); an unknown path stays 404", async () => {
    const get = await api.get("/prepare-transactions");
    expect(get.status, JSON.stringify(get.body)).to.equal(405);
    expect(get.body.error.code).to.equal("METHOD_NOT_ALLOWED");
    expect(get.headers.get("allow")).to.equal("POST, OPTIONS");
    expect(get.body.message).to.equal("GET is not allowed on /prepare-transactions: it answers POST");
    const post = await api.post("/get-token-info", { tokenSymbol: symbol });
    expect(post.status).to.equal(405);
    expect(post.headers.get("allow")).to.equal("GET, HEAD, OPTIONS");
    // a templated path, and the letter case and trailing slash express tolerates
    const webhook = await api.post("/webhooks/00000000-0000-4000-8000-000000000000", {});
    expect(webhook.status).to.equal(405);
    expect(webhook.headers.get("allow")).to.equal("DELETE, GET, HEAD, PATCH, OPTIONS");
    expect((await api.get("/Prepare-Transactions/")).status).to.equal(405);
    const unknown = await api.get("/no-such-route");
    expect(unknown.status).to.equal(404);
    expect(unknown.body.error.code).to.equal("NOT_FOUND");
  });

  it("signedTransactions as one string for a batch of two: says it must be an array of signed transaction hex strings", async () => {
    const { prepared, signedTransactions } = await prepareAndSign(api, issuer, {
      method: "mintToken",
      chainId,
      tokenSymbol: symbol,
      userToMint: [{ investorEmail: "m@catalogue.test", investorAddress: Wallet.createRandom().address, amount: "1" }],
    });
    expect(prepared.transactions).to.have.length(2);
    const res = await api.post("/send-transactions", {
      txId: prepared.txId,
      signedTransactions: signedTransactions[0],
    });
    expectInvalid(
      res,
      "signedTransactions",
      "signedTransactions must be an array of signed transaction hex strings, one per prepared transaction in order: this txId has 2, and one string was sent",
    );
    // a number: says what it must be
    expectInvalid(
      await api.post("/send-transactions", { txId: prepared.txId, signedTransactions: 5 }),
      "signedTransactions",
      /^signedTransactions must be an array of signed transactions \(0x-prefixed hex strings, one per prepared transaction\), not a number$/,
    );
    // the array form still goes through
    const sent = await api.post("/send-transactions", { txId: prepared.txId, signedTransactions });
    expect(sent.status, JSON.stringify(sent.body)).to.be.oneOf([200, 202]);
  });

  it("every error answered above carries a catalogue code (the test client checks each against the ErrorCode enum)", async () => {
    for (const res of [
      await api.get("/no-such-route"),
      await api.get("/prepare-transactions"),
      await service.api.get("/get-token-info"),
    ]) {
      expect(isErrorCode(res.body.error.code), res.body.error.code).to.equal(true);
      expect(res.status).to.equal(ERROR_CODES[res.body.error.code as keyof typeof ERROR_CODES].status);
    }
  });
});
