// tier: release
import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import ts from "typescript";
import { CLIENT_DIR } from "../helpers/client-package";

const ROOT = path.resolve(__dirname, "../..");

interface PackageJson {
  name: string;
  main?: string;
  types?: string;
  files?: string[];
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as PackageJson;

/** The client's source files (not the generated declarations, not the build). */
function clientSources(): string[] {
  return fs
    .readdirSync(CLIENT_DIR)
    .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
    .map((f) => path.join(CLIENT_DIR, f));
}

/** The packages a source file needs at run time: its imports and re-exports that are not type-only, by package name. */
function runtimePackages(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022);
  const found: string[] = [];
  for (const statement of source.statements) {
    let specifier: ts.Expression | undefined;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const onlyTypes =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (!clause.name &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!onlyTypes) specifier = statement.moduleSpecifier;
    } else if (ts.isExportDeclaration(statement) && !statement.isTypeOnly) {
      specifier = statement.moduleSpecifier;
    }
    if (!specifier || !ts.isStringLiteral(specifier) || specifier.text.startsWith(".")) continue;
    const parts = specifier.text.split("/");
    found.push(specifier.text.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]);
  }
  return found;
}

/** Module specifiers in the repository's own TypeScript (tests, scripts, benchmarks, service) that name a path. */
function relativeImports(): { file: string; specifier: string }[] {
  const found: { file: string; specifier: string }[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts")) {
        for (const match of fs.readFileSync(full, "utf8").matchAll(/from "(\.{1,2}\/[^"]*)"/g))
          found.push({ file: full, specifier: match[1] });
      }
    }
  };
  for (const dir of ["test", "scripts", "bench", "service"]) walk(path.join(ROOT, dir));
  return found;
}

describe("client/: the typed client is a package of its own", () => {
  const pkg = readJson(path.join(CLIENT_DIR, "package.json"));

  it("it ships its build (dist/: JavaScript and declarations), which its prepare makes with the repository's TypeScript", () => {
    expect(pkg.name).to.equal("@tak/client");
    expect(pkg).to.include({ main: "dist/index.js", types: "dist/index.d.ts" });
    expect(pkg.files).to.deep.equal(["dist"]);
    expect(pkg.scripts?.prepare).to.equal("npm run build");
    expect(pkg.scripts?.build)
      .to.match(/^tsc -p tsconfig\.json && /)
      .and.include("schema.d.ts");
    const config = ts.readConfigFile(path.join(CLIENT_DIR, "tsconfig.json"), (f) => ts.sys.readFile(f)).config as {
      compilerOptions: Record<string, unknown>;
    };
    expect(config.compilerOptions).to.include({ declaration: true, outDir: "dist" });
  });

  it("it declares every package its code needs at run time, none for development, each as the repository installs it", () => {
    const needed = [...new Set(clientSources().flatMap(runtimePackages))].sort();
    expect(needed).to.include("openapi-fetch");
    expect(Object.keys(pkg.dependencies ?? {}).sort()).to.deep.equal(needed);
    expect(pkg.devDependencies, "a consumer installs no development dependency").to.equal(undefined);
    expect(pkg.peerDependencies).to.equal(undefined);
    // The repository's tests run the client on the versions its own install resolves: the same ranges.
    const root = readJson(path.join(ROOT, "package.json"));
    for (const [name, range] of Object.entries(pkg.dependencies ?? {}))
      expect(root.dependencies?.[name] ?? root.devDependencies?.[name], name).to.equal(range);
  });

  it("the repository imports the client's source (client/index), never the package's folder, which resolves to its build", () => {
    const folder = relativeImports().filter(
      ({ file, specifier }) => path.resolve(path.dirname(file), specifier) === CLIENT_DIR,
    );
    expect(folder.map(({ file, specifier }) => `${path.relative(ROOT, file)}: ${specifier}`)).to.deep.equal([]);
    expect(
      relativeImports().some(
        ({ file, specifier }) => path.resolve(path.dirname(file), specifier) === path.join(CLIENT_DIR, "index"),
      ),
    ).to.equal(true);
  });
});
