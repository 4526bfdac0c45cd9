import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { pathsNamedIn, sourceFiles, stalePaths } from "../../scripts/lib/comment-paths";

const ROOT = path.resolve(__dirname, "../..");

/**
 * Documents the code may cite: only what is in the repository. The names of the specifications the service was first
 * written against are spelled in pieces so that this file does not cite them itself.
 */
const ABSENT_DOCUMENTS: { pattern: RegExp; what: string }[] = [
  { pattern: new RegExp(["WIRE", "COMPAT"].join("-")), what: "the wire notes (see docs/wire-conventions.md)" },
  { pattern: new RegExp(["API", "SPEC"].join("-")), what: "the API specification (say it, or point to docs/)" },
  { pattern: new RegExp("\u00a7"), what: "a numbered section of a document that is not here" },
  { pattern: new RegExp(["\\.\\.", "shared"].join("/")), what: "a path outside the repository" },
  { pattern: new RegExp(["\\bthe spec\\b", "\\bspec's\\b"].join("|"), "i"), what: "a specification that is not here" },
];

const CITING_DIRS = ["service", "scripts", "test", "bench", "contracts", "client", "docs"];
const TEXT = /\.(ts|mts|js|mjs|cjs|sql|sol|md|html|css)$/;

function textFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const relative = `${dir}/${entry.name}`;
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      if (entry.isDirectory()) walk(relative);
      else if (TEXT.test(entry.name)) out.push(relative);
    }
  };
  for (const dir of CITING_DIRS) walk(dir);
  return [...out, "README.md"];
}

describe("comments that name files, and documents the code cites", () => {
  it("reads paths out of comments (and only comments)", () => {
    const named = pathsNamedIn(
      "service/example.ts",
      [
        "/** Built by service/engine/send.ts and ./outbox.ts; see docs/x.md. */",
        'const route = "/docs/assets/page.js"; // GET /x402/token/create, https://example.org/a/b.md',
        "// deployments/<chainId>.json, rehearsal*.ts",
        "const text = 'service/not/a/comment.ts';",
      ].join("\n"),
    );
    expect(named.map((n) => [n.line, n.path])).to.deep.equal([
      [1, "service/engine/send.ts"],
      [1, "./outbox.ts"],
      [1, "docs/x.md"],
    ]);
  });

  it("every file a comment of service/, scripts/, test/ or bench/ names exists", () => {
    expect(sourceFiles(["service"]).length, "the reader sees the service's files").to.be.greaterThan(100);
    const stale = stalePaths(["service", "scripts", "test", "bench"]).map(
      (n) => `${n.file}:${n.line} names ${n.path}, which is not in the repository: ${n.text}`,
    );
    expect(stale, `comments naming files that moved or never were here:\n${stale.join("\n")}\n`).to.deep.equal([]);
  });

  it("nothing cites a document that is not in the repository", () => {
    const citations: string[] = [];
    for (const file of textFiles()) {
      const lines = fs.readFileSync(path.join(ROOT, file), "utf8").split("\n");
      lines.forEach((line, i) => {
        for (const { pattern, what } of ABSENT_DOCUMENTS) {
          if (pattern.test(line)) citations.push(`${file}:${i + 1} cites ${what}: ${line.trim().slice(0, 160)}`);
        }
      });
    }
    expect(citations, `citations of documents not in the repository:\n${citations.join("\n")}\n`).to.deep.equal([]);
  });
});
