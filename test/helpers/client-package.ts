import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import ts from "typescript";

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, "../..");
export const CLIENT_DIR = path.join(ROOT, "client");

/**
 * The environment for an npm run as a reader runs it: without the npm_* variables of the `npm test` or `npx` this
 * process runs under (npm_config_local_prefix would make the child think it works in this repository).
 */
function readerEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== "INIT_CWD"),
  );
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
}

/**
 * Makes `dir` (outside the repository) a project that installed the typed client as a reader does:
 * `npm install --install-links <repository>/client <packages…>`. npm packs client/ (its `prepare` builds dist/ with
 * the repository's TypeScript) and installs the copy with its dependencies, and `packages`, from the registry.
 */
export async function installClient(dir: string, packages: string[]): Promise<void> {
  if (!fs.existsSync(path.join(dir, "package.json")))
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "client-reader", private: true }));
  const args = ["install", "--install-links", CLIENT_DIR, ...packages, "--prefer-offline"];
  try {
    await run("npm", args, { cwd: dir, env: readerEnv(), timeout: 300_000 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string };
    throw new Error(`npm ${args.join(" ")} failed in ${dir}:\n${e.stdout ?? ""}\n${e.stderr ?? String(error)}`);
  }
}

/**
 * Type-checks TypeScript files of a project made by installClient as its reader's editor would: ES modules resolved
 * from the project's own node_modules (the client's declarations as packed), Node's types from this repository. The
 * files and the client's declarations are checked (not the rest of node_modules). Returns the errors, empty if none.
 */
export function typeErrorsIn(files: string[]): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    noEmit: true,
    types: ["node"],
    typeRoots: [path.join(ROOT, "node_modules", "@types")],
  };
  const program = ts.createProgram(files, options);
  const checked = program
    .getSourceFiles()
    .filter((f) => files.includes(f.fileName) || f.fileName.includes("/node_modules/@tak/client/"));
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...checked.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
  ];
  return diagnostics.map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: `
        : "";
    return where + ts.flattenDiagnosticMessageText(d.messageText, "\n");
  });
}
