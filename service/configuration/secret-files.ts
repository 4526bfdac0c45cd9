import fs from "node:fs";
import { chainVariableOf, SECRET_NAMES } from "./variables";

/** Whether `name` is a secret that may be given as `<name>_FILE`. */
function isSecret(name: string): boolean {
  return SECRET_NAMES.includes(name) || chainVariableOf(name)?.variable.doc.secret === true;
}

/**
 * `<NAME>_FILE=/run/secrets/name` gives a secret as a file (as Docker, Kubernetes and systemd credentials mount them):
 * the environment with each such secret read in (trailing whitespace and newlines dropped). Giving both NAME and
 * NAME_FILE, a file that cannot be read or an empty file is an error naming the variable; the file's content is never
 * part of a message.
 */
export function readSecretFiles(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; problems: string[] } {
  const out: NodeJS.ProcessEnv = { ...env };
  const problems: string[] = [];
  for (const [fileName, file] of Object.entries(env)) {
    if (!fileName.endsWith("_FILE") || !file) continue;
    const name = fileName.slice(0, -"_FILE".length);
    if (!isSecret(name)) continue;
    delete out[fileName];
    if (env[name]) {
      problems.push(`${fileName}: ${name} is set too; give the secret once (the file, or the variable)`);
      continue;
    }
    let value: string;
    try {
      value = fs.readFileSync(file, "utf8").replace(/\s+$/, "");
    } catch (error) {
      problems.push(`${fileName}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
      continue;
    }
    if (!value) problems.push(`${fileName}: ${file} is empty`);
    else out[name] = value;
  }
  return { env: out, problems };
}
