import fs from "node:fs";
import path from "node:path";

/**
 * A new embedded database on disk starts as a copy of a template: the files of a PGlite cluster that was created
 * (what initdb does) and migrated, then closed cleanly. Creating and migrating a cluster costs ~4 s of CPU; copying
 * ~40 MiB of files and opening them costs well under one. `npm run build` writes the template beside the compiled
 * module (dist/service/store/pglite-template-<PGlite version>/); the files of one PGlite version only ever open with that
 * version. The template holds the schema and nothing else: no key, no row of an operator's. Without a template (a
 * source run), a new database is created and migrated as before; migrations missing from a template are applied at
 * start as on any database.
 */
export function pgliteTemplateDir(): string {
  return path.join(__dirname, `pglite-template-${pgliteVersion()}`);
}

/**
 * Creates `dataDir` as a copy of the template when there is one and `dataDir` is missing or empty; answers whether it
 * did. The copy is made beside it and renamed into place, so a start stopped halfway leaves no half database behind.
 */
export function copyPgliteTemplate(dataDir: string, template = pgliteTemplateDir()): boolean {
  if (!fs.existsSync(path.join(template, "PG_VERSION"))) return false;
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) return false;
  const partial = `${dataDir}.${process.pid}.partial`;
  try {
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(partial, { recursive: true, mode: 0o700 });
    fs.cpSync(template, partial, { recursive: true });
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.renameSync(partial, dataDir);
    return true;
  } catch {
    // A template that cannot be read or copied: this database is created the slow way instead.
    fs.rmSync(partial, { recursive: true, force: true });
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    return false;
  }
}

let version: string | undefined;
function pgliteVersion(): string {
  // The package's exports do not include its package.json: read it from beside its entry point (dist/index.cjs).
  version ??= (
    JSON.parse(fs.readFileSync(path.join(path.dirname(require.resolve("@electric-sql/pglite")), "..", "package.json"), "utf8")) as { version: string }
  ).version;
  return version;
}
