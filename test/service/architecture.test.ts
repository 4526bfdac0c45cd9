import { expect } from "chai";
import fs from "node:fs";
import path from "node:path";
import {
  circles,
  DOC_MAX_LINE,
  documentedLongFunctions,
  engineHttpErrorImports,
  importEdges,
  layerBreaks,
  layerOf,
  LONG_FUNCTION_LINES,
  longFiles,
  longLines,
  MAP_MAX_BYTES,
  MAX_FILE_LINES,
  longFunctions,
  missingPaths,
  outsideHttpEdge,
  packageImporters,
  pathsNamedInDocument,
  README_MAX_BYTES,
  readmeOf,
  readmePaths,
  serviceDirectories,
  serviceFiles,
  serviceFolders,
  type ImportEdge,
} from "../../scripts/lib/architecture";

const ROOT = path.join(__dirname, "..", "..");
const MAP = "docs/ARCHITECTURE.md";
const read = (file: string) =>
  fs.existsSync(path.join(ROOT, file)) ? fs.readFileSync(path.join(ROOT, file), "utf8") : "";

describe("the architecture of service/ (docs/ARCHITECTURE.md, the folders' READMEs, scripts/lib/architecture.ts)", () => {
  const files = serviceFiles();
  const edges = importEdges(files);
  const map = read(MAP);
  const readmes = readmePaths();

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

  it(`keeps ${MAP} to a page: at most ${MAP_MAX_BYTES} bytes, no line over ${DOC_MAX_LINE} characters`, () => {
    expect(Buffer.byteLength(map), MAP).to.be.within(1, MAP_MAX_BYTES);
    expect(longLines(map), MAP).to.deep.equal([]);
  });

  it("gives every folder of service/ a short README.md, and the map links to each", () => {
    expect(serviceFolders()).to.include.members(["engine", "store", "operator", "auth"]);
    expect(readmes.filter((readme) => !fs.existsSync(path.join(ROOT, readme)))).to.deep.equal([]);
    const unlinked = readmes.filter((readme) => !map.includes(`](../${readme})`));
    expect(unlinked, "READMEs the map does not link").to.deep.equal([]);
    for (const readme of readmes) {
      const text = read(readme);
      expect(Buffer.byteLength(text), readme).to.be.at.most(README_MAX_BYTES);
      expect(longLines(text), readme).to.deep.equal([]);
    }
  });

  it("names every folder under service/ in its parent's README (or the map), and only files that exist", () => {
    const parentReadme = (dir: string) => {
      const parts = dir.split("/").filter(Boolean);
      return parts.length === 1 ? MAP : `service/${parts[0]}/README.md`;
    };
    const unnamed = serviceDirectories().filter((dir) => {
      const parts = dir.split("/").filter(Boolean);
      const named = parts.length === 1 ? `service/${dir}` : `${parts.slice(1).join("/")}/`;
      return !read(parentReadme(dir)).includes(named);
    });
    expect(unnamed, "folders their parent's README does not name").to.deep.equal([]);
    // the path reader sees names, and sees past globs, placeholders and URLs
    expect(
      pathsNamedInDocument("`runner.ts`, engine/send.ts; `intents-*.ts`, NNN_<name>.sql, https://x.org/a.ts, `x.ts:f`"),
    ).to.deep.equal(["runner.ts", "engine/send.ts", "x.ts"]);
    expect(missingPaths("service/engine/README.md", ["runner.ts", "store/outbox.ts", "gone.ts"])).to.deep.equal([
      "gone.ts",
    ]);
    const stale = [MAP, ...readmes].flatMap((doc) =>
      missingPaths(doc, pathsNamedInDocument(read(doc))).map((p) => `${doc} names ${p}`),
    );
    expect(stale, "paths named in the map or a README that are not in the tree").to.deep.equal([]);
  });

  it(`has no function over ${LONG_FUNCTION_LINES} lines that its folder's README does not name with its reason`, () => {
    expect(readmeOf("service/engine/relayer.ts")).to.equal("service/engine/README.md");
    expect(readmeOf("service/metrics.ts")).to.equal("service/README.md");
    expect([
      ...documentedLongFunctions(
        "service/methods/README.md",
        "## Functions longer than 80 lines\n- `sto/new-sto.ts:plan`",
      ),
    ]).to.deep.equal(["service/methods/sto/new-sto.ts:plan"]);
    const long = longFunctions(LONG_FUNCTION_LINES, files);
    const explained = new Set(readmes.flatMap((readme) => [...documentedLongFunctions(readme, read(readme))]));
    const unexplained = long
      .filter((f) => !documentedLongFunctions(readmeOf(f.file), read(readmeOf(f.file))).has(`${f.file}:${f.name}`))
      .map((f) => `${f.file}:${f.name} (${f.lines} lines, name it in ${readmeOf(f.file)})`);
    expect(unexplained).to.deep.equal([]);
    // and no README names a long function that is gone (it stays true)
    const present = new Set(long.map((f) => `${f.file}:${f.name}`));
    expect([...explained].filter((name) => !present.has(name))).to.deep.equal([]);
  });

  it(`keeps every file of service/ at or under ${MAX_FILE_LINES} lines`, () => {
    expect(longFiles(files).map((f) => `${f.file} (${f.lines} lines)`)).to.deep.equal([]);
  });
});
