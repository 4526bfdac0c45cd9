// tier: release
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { Wallet } from "ethers";
import ts from "typescript";
import { installClient, typeErrorsIn } from "../helpers/client-package";
import { createOwnSandbox, type Sandbox } from "../helpers/sandbox";
import { startTestService, type TestService } from "../helpers/service";

const ROOT = path.resolve(__dirname, "../..");
const run = promisify(execFile);

interface Snippet {
  /** The file it is in, relative to the repository's root, and the line its fence opens on. */
  file: string;
  line: number;
  lang: string;
  /** How it is run: "run", "test=<file>", "typecheck=<module>" or "text". */
  how: string;
  code: string;
}

/**
 * The documents whose code is run here: the README and every guide in docs/. The architecture document's diagrams are
 * held to the code by test/service/architecture.test.ts; generated pages (docs/configuration.md, docs/reference/) by
 * the tests of their generators.
 */
function guideFiles(): string[] {
  const guides = fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md") && name !== "ARCHITECTURE.md")
    .sort()
    .map((name) => `docs/${name}`);
  return ["README.md", ...guides];
}

/** Every fenced block of a document with its info string: ```lang how (```text alone for text). */
function snippetsOf(file: string): Snippet[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const found: Snippet[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let match = fence.exec(text); match; match = fence.exec(text)) {
    const [lang = "", tag = ""] = match[1].trim().split(/\s+/);
    // A ```text block (a diagram, a message, a listing) needs no second word.
    const how = lang === "text" && !tag ? "text" : tag;
    found.push({ file, line: text.slice(0, match.index).split("\n").length, lang, how, code: match[2] });
  }
  return found;
}

const where = (s: Snippet) => `${s.file} line ${s.line}`;

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

/** A document's prose: its fenced blocks left out, so neither a `# comment` nor a link inside code counts. */
function proseOf(file: string): string {
  return fs.readFileSync(path.join(ROOT, file), "utf8").replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
}

/** The anchors of a document's headings. */
function anchorsOf(file: string): Set<string> {
  return new Set([...proseOf(file).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));
}

/**
 * The code of the README and the guides, as a reader would use it: each fenced block says how it is run (its info
 * string after the language). `run` blocks run here against a sandbox of their own, `typecheck=` blocks are compiled against the module
 * they describe, `test=` blocks are run by the file they name, `text` blocks are diagrams, messages and listings.
 */
describe("README.md and docs/*.md: every snippet is run", function () {
  this.timeout(600_000);
  let sandbox: Sandbox;
  let service: TestService;
  let work: string;
  const all = guideFiles().flatMap(snippetsOf);
  const runnable = (lang: string) => all.filter((s) => s.how === "run" && s.lang === lang);

  before(async () => {
    sandbox = await createOwnSandbox();
    service = await startTestService(sandbox);
    work = fs.mkdtempSync(path.join(os.tmpdir(), "tak-readme-"));
    // What `npm start` leaves for a reader: the sandbox key and the accounts in .data/sandbox/dev-credentials.json.
    const { key } = await service.services.apiKeys.create({ email: "sandbox@localhost", plan: "Enterprise" });
    for (const account of sandbox.accounts.slice(1, 6)) await service.services.signers.add(account.address, "all-keys");
    fs.mkdirSync(path.join(work, ".data", "sandbox"), { recursive: true });
    const accounts = sandbox.accounts.slice(0, 10).map((a) => ({ address: a.address, privateKey: a.privateKey }));
    fs.writeFileSync(
      path.join(work, ".data", "sandbox", "dev-credentials.json"),
      JSON.stringify({ baseUrl: service.url, apiKey: key, accounts }),
    );
  });
  after(async () => {
    await service?.stop();
    await sandbox?.close();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it("every fenced block says how it is run, and a block run elsewhere names a file that exists", () => {
    expect(all.length).to.be.greaterThan(15);
    for (const s of all) {
      expect(s.how, `${where(s)}: a fenced block without "run", "test=…", "typecheck=…" or "text"`).to.match(
        /^(run|text|test=\S+|typecheck=\S+)$/,
      );
      if (s.how.startsWith("test="))
        expect(fs.existsSync(path.join(ROOT, s.how.slice(5))), `${where(s)}: ${s.how}`).to.equal(true);
    }
    expect(runnable("sh")).to.have.length(2);
    expect(runnable("ts")).to.have.length(3);
  });

  it("the README is a door: the two set-up commands, at most 250 lines, a link to every guide", () => {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    const setUp = snippetsOf("README.md").map((s) => s.code.trim());
    expect(setUp).to.include.members(["npm install && npm start", "npm install && npm test"]);
    expect(readme.split("\n").length).to.be.at.most(250);
    for (const guide of guideFiles().slice(1)) expect(readme, `README.md links ${guide}`).to.include(`](${guide}`);
  });

  it("every relative link of the README and the guides names a file that exists, and an anchor a heading of it", () => {
    const broken: string[] = [];
    for (const file of guideFiles()) {
      for (const [, target] of proseOf(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [pathPart, anchor] = target.split("#");
        const resolved = pathPart ? path.normalize(path.join(path.dirname(file), pathPart)) : file;
        if (!fs.existsSync(path.join(ROOT, resolved))) broken.push(`${file}: ${target} (no such file)`);
        else if (anchor && !anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
      }
    }
    expect(broken).to.deep.equal([]);
  });

  it("the deploy guide's wallet snippet prints a fresh address and private key for each role", async () => {
    const snippet = runnable("sh").find((s) => s.code.includes("Wallet.createRandom"))!;
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", snippet.code], { cwd: ROOT });
    const rows = stdout
      .trim()
      .split("\n")
      .map((line) => line.split(" "));
    expect(rows.map((r) => r[0])).to.deep.equal(["deployer", "relayer", "settlement"]);
    for (const [, address, key] of rows) expect(new Wallet(key).address).to.equal(address);
  });

  it("the shell snippet takes API_KEY and ISSUER_KEY from the credentials file npm start writes", async () => {
    const snippet = runnable("sh").find((s) => s.code.includes("API_KEY"))!;
    const { stdout } = await run(
      "bash",
      ["-euo", "pipefail", "-c", `${snippet.code}\necho "$API_KEY"; echo "$ISSUER_KEY"`],
      { cwd: work },
    );
    const credentials = JSON.parse(
      fs.readFileSync(path.join(work, ".data", "sandbox", "dev-credentials.json"), "utf8"),
    );
    expect(stdout.trim().split("\n")).to.deep.equal([credentials.apiKey, sandbox.accounts[1].privateKey]);
  });

  it("the TypeScript examples run from a directory outside the repository that installed the client: the README's first write, a tokenization with the key (getting started), an agent paid with x402 (the client guide)", async () => {
    const credentials = JSON.parse(
      fs.readFileSync(path.join(work, ".data", "sandbox", "dev-credentials.json"), "utf8"),
    );
    const env = {
      ...process.env,
      BASE_URL: service.url,
      API_KEY: credentials.apiKey,
      ISSUER_KEY: sandbox.accounts[1].privateKey,
      PAYER_KEY: sandbox.accounts[3].privateKey,
    };
    // What the README has the reader do: `npm install --install-links <this repository>/client ethers`.
    await installClient(work, ["ethers@6"]);
    const examples = runnable("ts").map((snippet, index) => ({
      snippet,
      file: path.join(work, `example-${index}.mts`),
    }));
    for (const { snippet, file } of examples) fs.writeFileSync(file, snippet.code);
    // Type-checked against the packed declarations, as the reader's editor would, then run by node as is.
    expect(typeErrorsIn(examples.map((e) => e.file))).to.deep.equal([]);
    const outputs: string[] = [];
    for (const { snippet, file } of examples) {
      try {
        const { stdout } = await run(process.execPath, [file], { cwd: work, env, timeout: 300_000 });
        outputs.push(stdout);
      } catch (error) {
        const e = error as { stdout?: string; stderr?: string };
        throw new Error(`${where(snippet)} failed:\n${e.stdout ?? ""}\n${e.stderr ?? String(error)}`);
      }
    }
    const outputOf = (file: string) => outputs[runnable("ts").findIndex((s) => s.file === file)];
    expect(outputOf("README.md").trim()).to.equal("success");
    expect(outputOf("docs/getting-started.md")).to.match(/^ACME is 0x[0-9a-fA-F]{40} \(batch success\)$/m);
    expect(outputOf("docs/client.md")).to.match(/^agent [0-9a-f-]{36}: success, paid 0x[0-9a-f]{64}$/m);
  });

  it("the typecheck= blocks match the code they describe", () => {
    const blocks = all.filter((s) => s.how.startsWith("typecheck="));
    expect(blocks).to.have.length.greaterThan(0);
    const files = blocks.map((block, index) => {
      const module = `./${block.how.slice("typecheck=".length)}`;
      const name = /interface (\w+)/.exec(block.code)![1];
      const file = path.join(ROOT, `readme-typecheck-${process.pid}-${index}.ts`);
      // The block's declaration must be assignable both ways to the one the module exports.
      fs.writeFileSync(
        file,
        `import type * as Described from "${module}";\nimport type { KycInvestorRecord } from "./service/store/kyc";\n${block.code}\n` +
          `export const fromReadme = (x: ${name}): Described.${name} => x;\nexport const toReadme = (x: Described.${name}): ${name} => x;\n`,
      );
      return file;
    });
    try {
      const config = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), (file) => ts.sys.readFile(file));
      const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
      const program = ts.createProgram(files, { ...options, noEmit: true, noUnusedLocals: false });
      const problems = ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
      expect(problems).to.deep.equal([]);
    } finally {
      for (const file of files) fs.rmSync(file, { force: true });
    }
  });
});
