import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import {
  circles,
  documentedLongFunctions,
  engineHttpErrorImports,
  importEdges,
  layerBreaks,
  layerOf,
  LONG_FUNCTION_LINES,
  longFiles,
  MAX_FILE_LINES,
  longFunctions,
  outsideHttpEdge,
  packageImporters,
  serviceDirectories,
  serviceFiles,
  type ImportEdge,
} from "../../scripts/lib/architecture";

const ROOT = path.join(__dirname, "..", "..");
const DOCUMENT = path.join(ROOT, "docs", "ARCHITECTURE.md");

describe("the architecture of service/ (docs/ARCHITECTURE.md, scripts/lib/architecture.ts)", () => {
  const files = serviceFiles();
  const edges = importEdges(files);
  const document = fs.readFileSync(DOCUMENT, "utf8");

  it("the import reader sees imports, type-only imports, and a circle when there is one", () => {
    expect(edges.length).to.be.greaterThan(files.length);
    expect(
      edges.some((e) => e.from === "service/server.ts" && e.to === "service/composition.ts" && !e.typeOnly),
    ).to.equal(true);
    expect(edges.some((e) => e.typeOnly)).to.equal(true);
    const made: ImportEdge[] = [
      { from: "service/a.ts", to: "service/b.ts", typeOnly: false },
      { from: "service/b.ts", to: "service/c.ts", typeOnly: true },
      { from: "service/c.ts", to: "service/a.ts", typeOnly: false },
      { from: "service/c.ts", to: "service/d.ts", typeOnly: false },
    ];
    expect(circles(made)).to.deep.equal([["service/a.ts", "service/b.ts", "service/c.ts"]]);
  });

  it("has no import circles (type-only imports included)", () => {
    expect(circles(edges)).to.deep.equal([]);
  });

  it("puts every file in a layer, and no import runs from a lower layer to a higher one", () => {
    expect(files.filter((f) => layerOf(f) === undefined)).to.deep.equal([]);
    expect(layerOf("service/store/batches.ts")).to.be.lessThan(layerOf("service/engine/runner.ts")!);
    expect(
      layerBreaks([{ from: "service/store/batches.ts", to: "service/engine/runner.ts", typeOnly: true }]),
    ).to.have.length(1);
    expect(layerBreaks(edges).map((e) => `${e.from} -> ${e.to}`)).to.deep.equal([]);
  });

  it("keeps the prepare side and the read side apart: what both need lives in domains/; routes run no SQL", () => {
    const across = edges.filter(
      (e) =>
        (e.from.startsWith("service/reads/") && e.to.startsWith("service/methods/")) ||
        (e.from.startsWith("service/methods/") && e.to.startsWith("service/reads/")),
    );
    expect(across.map((e) => `${e.from} -> ${e.to}`)).to.deep.equal([]);
    const sql = files.filter(
      (f) =>
        f.startsWith("service/routes/") &&
        /\.query(<[^>]*>)?\(|\bSELECT\b|\bINSERT INTO\b/.test(fs.readFileSync(path.join(ROOT, f), "utf8")),
    );
    expect(sql).to.deep.equal([]);
  });

  it("imports express only at the HTTP edge (http/, routes/, the composition files): the layers below take plain values", () => {
    const importers = packageImporters("express", files);
    expect(importers).to.include("service/app.ts"); // the reader sees the imports it is about
    expect(importers).to.include("service/http/route.ts");
    expect(
      outsideHttpEdge([
        "service/auth/api-key.ts",
        "service/routes/write.ts",
        "service/usecases/write.ts",
        "service/main.ts",
      ]),
    ).to.deep.equal(["service/auth/api-key.ts", "service/usecases/write.ts"]);
    expect(outsideHttpEdge(importers)).to.deep.equal([]);
  });

  it("keeps HTTP out of the engine: it throws its own errors (engine/errors.ts), never an ApiError or a catalogue code", () => {
    expect(
      engineHttpErrorImports([{ from: "service/engine/send.ts", to: "service/errors.ts", typeOnly: true }]),
    ).to.have.length(1);
    expect(engineHttpErrorImports(edges).map((e) => `${e.from} -> ${e.to}`)).to.deep.equal([]);
  });

  it("imports packages by name, never by a path into node_modules", () => {
    const offenders = files.filter((f) =>
      /from\s+["'][^"']*node_modules\//.test(fs.readFileSync(path.join(ROOT, f), "utf8")),
    );
    expect(offenders).to.deep.equal([]);
  });

  it("names every directory under service/ in docs/ARCHITECTURE.md", () => {
    const missing = serviceDirectories().filter((dir) => !document.includes(`service/${dir}`));
    expect(missing).to.deep.equal([]);
  });

  it(`has no function over ${LONG_FUNCTION_LINES} lines that docs/ARCHITECTURE.md does not name with its reason`, () => {
    const explained = documentedLongFunctions(document);
    const unexplained = longFunctions(LONG_FUNCTION_LINES, files)
      .filter((f) => !explained.has(`${f.file}:${f.name}`))
      .map((f) => `${f.file}:${f.name} (${f.lines} lines)`);
    expect(unexplained).to.deep.equal([]);
    // and the document names no long function that is gone (it stays true)
    const present = new Set(longFunctions(LONG_FUNCTION_LINES, files).map((f) => `${f.file}:${f.name}`));
    expect([...explained].filter((name) => !present.has(name))).to.deep.equal([]);
  });

  it(`keeps every file of service/ at or under ${MAX_FILE_LINES} lines`, () => {
    expect(longFiles(files).map((f) => `${f.file} (${f.lines} lines)`)).to.deep.equal([]);
  });
});
