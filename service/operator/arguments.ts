import { commandTable, type CliCommand, type CommandSpec } from "./command-table";
import { UsageError } from "./usage-error";

/**
 * The admin tool's command line, read against the command table (command-table.ts): the help text, and argv parsed
 * into a command. A bad argument is a UsageError (usage-error.ts) naming the flag, with the valid values where there is
 * a list of them.
 */

const usageLine = (spec: CommandSpec) =>
  [
    spec.name,
    ...Object.entries(spec.flags).map(([name, f]) => {
      const shown =
        spec.positional === name ? `<${f.placeholder}>` : f.boolean ? `--${name}` : `--${name} ${f.placeholder}`;
      return f.required ? `${shown}${f.repeated ? " ..." : ""}` : `[${shown}]`;
    }),
  ].join(" ");

export function helpText(table: CommandSpec[], spec?: CommandSpec): string {
  if (spec) {
    const flags = Object.entries(spec.flags).map(
      ([name, f]) =>
        `  --${name}${f.boolean ? "" : ` ${f.placeholder}`}${f.required ? " (required)" : ""}${f.repeated ? " (repeatable)" : ""}`,
    );
    return [
      `usage: npm run admin -- ${usageLine(spec)}`,
      "",
      `${spec.about}.`,
      ...(flags.length ? ["", ...flags] : []),
    ].join("\n");
  }
  return [
    "usage: npm run admin -- <command> [flags]        (on a server: node dist/service/operator/admin.js <command> …)",
    "",
    ...table.map((s) => `  ${usageLine(s)}\n      ${s.about}`),
    "",
    "npm run admin -- <command> --help   one command's flags.",
    "Configuration: the service's own (the environment, and ENV_FILE or ./.env): ENVIRONMENT, DATABASE_URL or DATA_DIR,",
    "ADMIN_TOKEN; see docs/configuration.md. On the embedded database, while the service runs, commands go through it",
    "(POST /admin/command with ADMIN_TOKEN). Output is JSON. The schema must be this version's: `npm run migrate` first.",
  ].join("\n");
}

export type Parsed = { help: string } | { command: CliCommand };

/** Parses argv (after the tool's name): a command, or the help asked for; throws UsageError for anything else. */
export function parseArguments(argv: string[], operations: string[]): Parsed {
  const table = commandTable(operations);
  const wantsHelp = argv.some((a) => a === "--help" || a === "-h") || argv[0] === "help";
  const [group, action, ...rest] = argv.filter((a) => a !== "help" || argv[0] !== "help");
  const spec = table.find((s) => s.name === `${group} ${action}`);
  if (wantsHelp) return { help: helpText(table, spec) };
  if (!spec) {
    const named = group ? `unknown command "${[group, action].filter(Boolean).join(" ")}"; ` : "";
    throw new UsageError(`${named}commands: ${table.map((s) => s.name).join(", ")} (npm run admin -- --help)`);
  }
  const given: Record<string, string[]> = {};
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i];
    if (!token.startsWith("--")) {
      positional.push(token);
      continue;
    }
    const name = token.slice(2);
    if (!spec.flags[name])
      throw new UsageError(
        `${spec.name}: unknown flag --${name}; its flags: ${
          Object.keys(spec.flags)
            .map((f) => `--${f}`)
            .join(", ") || "none"
        }`,
      );
    if (spec.flags[name].boolean) {
      (given[name] ??= []).push("true");
      continue;
    }
    const value = rest[i + 1];
    if (value === undefined || value.startsWith("--"))
      throw new UsageError(`${spec.name}: --${name} needs a value (${spec.flags[name].placeholder})`);
    (given[name] ??= []).push(value);
    i++;
  }
  if (positional.length > (spec.positional ? 1 : 0))
    throw new UsageError(
      `${spec.name}: unexpected argument ${JSON.stringify(positional.at(-1))}; usage: ${usageLine(spec)}`,
    );
  if (positional.length && spec.positional) (given[spec.positional] ??= []).unshift(positional[0]);
  const values: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(spec.flags)) {
    const list = given[name] ?? [];
    if (!list.length) {
      if (flag.required) throw new UsageError(`${spec.name}: --${name} is required; usage: ${usageLine(spec)}`);
      continue;
    }
    if (list.length > 1 && !flag.repeated)
      throw new UsageError(`${spec.name}: --${name} is given ${list.length} times`);
    const parsed = list.map((value) => {
      if (flag.boolean) return true;
      const checked = flag.schema.safeParse(value);
      if (!checked.success)
        throw new UsageError(
          `${spec.name}: --${name} ${checked.error.issues[0].message}, got ${JSON.stringify(value)}`,
        );
      return checked.data;
    });
    values[name] = flag.repeated ? parsed : parsed[0];
  }
  return { command: spec.build(values) };
}
