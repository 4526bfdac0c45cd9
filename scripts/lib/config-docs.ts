import { z } from "zod";
import { CHAIN_VARIABLES, configSchema, variables } from "../../service/configuration/variables";
import { stdioVariables } from "../../service/configuration/mcp-variables";
import { docs, GROUP_TITLES, type Group, type VariableDoc } from "../../service/configuration/variable-docs";

/**
 * docs/configuration.md and .env.example, written from the configuration's one schema (service/configuration/
 * variables.ts): every variable with its default, its rule and what the local sandbox and a production start do with
 * it. `npm run config:docs` writes them; test/service/configuration.test.ts fails when they are stale.
 */

interface Row {
  name: string;
  doc: VariableDoc;
  rule: string;
  default?: string;
  /** Read by the MCP stdio server on the user's machine, not by the service (left out of .env.example). */
  stdio?: boolean;
}

type JsonSchema = {
  type?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  pattern?: string;
  format?: string;
  default?: unknown;
};

/** The rule of a value as its JSON Schema (zod's input side) says it, when the documentation does not give one. */
function ruleOf(schema: JsonSchema): string {
  if (schema.enum) return `one of ${schema.enum.map((v) => `\`${v}\``).join(", ")}`;
  if (schema.type === "integer" || schema.type === "number") {
    const kind = schema.type === "integer" ? "whole number" : "number";
    if (schema.exclusiveMinimum !== undefined)
      return `${kind} > ${schema.exclusiveMinimum}${schema.maximum !== undefined ? `, ≤ ${schema.maximum}` : ""}`;
    if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
    if (schema.minimum !== undefined && schema.maximum !== undefined)
      return `${kind} from ${schema.minimum} to ${schema.maximum}`;
    if (schema.minimum !== undefined) return `${kind} ≥ ${schema.minimum}`;
    return kind;
  }
  if (schema.format === "uri") return "a URL";
  if (schema.pattern) return `matches \`${schema.pattern}\``;
  if (schema.minLength) return `at least ${schema.minLength} characters`;
  return "text";
}

function rows(): Row[] {
  const json = z.toJSONSchema(configSchema, { io: "input", unrepresentable: "any" }) as {
    properties: Record<string, JsonSchema>;
  };
  const plain = Object.entries(variables).map(([name, schema]): Row => {
    const property = json.properties[name];
    const doc = docs.get(schema)!;
    return { name, doc, rule: doc.rule ?? ruleOf(property), default: defaultOf(schema, property) };
  });
  const stdioJson = z.toJSONSchema(z.object(stdioVariables), { io: "input", unrepresentable: "any" }) as {
    properties: Record<string, JsonSchema>;
  };
  const stdio = Object.entries(stdioVariables).map(([name, schema]): Row => {
    const property = stdioJson.properties[name];
    const doc = docs.get(schema)!;
    return { name, doc, rule: doc.rule ?? ruleOf(property), default: defaultOf(schema, property), stdio: true };
  });
  const perChain = CHAIN_VARIABLES.map((v): Row => ({
    name: `${v.prefix}<chainId>`,
    doc: v.doc,
    rule: v.doc.rule ?? ruleOf(z.toJSONSchema(v.value, { io: "input", unrepresentable: "any" }) as JsonSchema),
  }));
  return [...plain, ...perChain, ...stdio];
}

/** The default as written in the environment: the JSON Schema's, else what parsing nothing gives (a transformed value). */
function defaultOf(schema: z.ZodType, property: JsonSchema): string | undefined {
  const shown = (value: unknown) =>
    ["string", "number", "boolean"].includes(typeof value) ? String(value) : undefined;
  if (property.default !== undefined) return shown(property.default);
  const parsed = schema.safeParse(undefined);
  return parsed.success ? shown(parsed.data) : undefined;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function configurationMarkdown(): string {
  const all = rows();
  const lines = [
    "# Configuration",
    "",
    "<!-- Generated from service/configuration/variables.ts by `npm run config:docs`; test/service/configuration.test.ts fails when it is stale. -->",
    "",
    "Every variable the service reads, with its default and its rule. The same names configure the admin tool",
    "(`npm run admin`, `npm run migrate`) and the deploy script, so one `.env` serves all three (`.env.example` lists the",
    "production ones). The service and the admin tool read the environment and then the env file (`ENV_FILE`, else",
    "`./.env` when present; the environment wins); the local sandbox reads only the environment.",
    "",
    "**Two postures.** The local sandbox (`npm start`, `npm run service`, the test helpers) has development defaults.",
    "Every other start, the built service whatever its `ENVIRONMENT`, has the production posture: `ADMIN_TOKEN` and",
    "`DATA_ENCRYPTION_KEY` are required (nothing is generated), webhooks go to public https destinations only,",
    "`/metrics` needs `METRICS_TOKEN` or is off, and the database's schema must be this version's (`npm run migrate`",
    "changes it; the sandbox migrates as it starts). `ENVIRONMENT` only chooses the networks.",
    "",
    "**Checked at start.** A value against its rule, a name that is not a variable but has one of our prefixes",
    "(`RPC_URL_`, `X402_`, `RELAYER_`, `WEBHOOK_`, `KYC_`, `DATA_`, `DATABASE_`, `SMTP_`, `METRICS_`, `ADMIN_`, …) or is",
    "a near miss of a variable (`CONFIRMATION`), every element of a list, and a configured chain that cannot be served",
    "(no deployment file, a network of the other environment, a per-chain variable without its `RPC_URL_<chainId>`):",
    "each stops the start with one line naming the variable, the rule and, for a name, the closest valid one.",
    "",
    "**Secrets** (marked 🔒) may also be given as `<NAME>_FILE`, a file holding the value (as Docker and Kubernetes",
    "secrets and systemd credentials are mounted); trailing newlines are dropped. Giving both is an error. Secrets are",
    "never logged.",
    "",
  ];
  for (const group of Object.keys(GROUP_TITLES) as Group[]) {
    const inGroup = all.filter((r) => r.doc.group === group);
    if (!inGroup.length) continue;
    lines.push(
      `## ${GROUP_TITLES[group]}`,
      "",
      "| variable | default | rule | what it does | local sandbox | production |",
      "|---|---|---|---|---|---|",
    );
    for (const r of inGroup) {
      lines.push(
        `| \`${r.name}\`${r.doc.secret ? " 🔒" : ""} | ${r.default === undefined ? "—" : `\`${cell(r.default)}\``} | ${cell(r.rule)} | ${cell(r.doc.about)} | ${cell(r.doc.local ?? "")} | ${cell(r.doc.production ?? "")} |`,
      );
    }
    lines.push("");
  }
  return lines.join("\n");
}

/** .env.example: every variable a production deployment sets, with a placeholder; the others commented out with their default. */
export function envExample(): string {
  const lines = [
    "# The service's configuration for a production start (docs/configuration.md says what each variable does).",
    "# Generated from service/configuration/variables.ts by `npm run config:docs`. Copy it to .env (the service and",
    "# `npm run admin` read it), fill in the values, keep it out of version control. A secret may instead be given as",
    "# <NAME>_FILE=/run/secrets/name.",
    "",
  ];
  const all = rows();
  for (const group of Object.keys(GROUP_TITLES) as Group[]) {
    if (group === "tools") continue;
    const inGroup = all.filter((r) => r.doc.group === group && !r.stdio);
    if (!inGroup.length) continue;
    lines.push(`# --- ${GROUP_TITLES[group]}`);
    for (const r of inGroup) {
      // A secret's line stays empty (an empty variable is an unset one): a placeholder left in place must not pass for a value.
      if (r.name === "RPC_URL_<chainId>")
        lines.push(
          `# ${r.doc.example} (comma-separated, one line per chain served)`,
          "RPC_URL_11155111=",
          "RPC_URL_84532=",
        );
      else if (r.doc.example !== undefined && r.doc.secret)
        lines.push(`# ${r.doc.example}${r.doc.production?.startsWith("required") ? " (required)" : ""}`, `${r.name}=`);
      else if (r.doc.example !== undefined) lines.push(`${r.name}=${r.doc.example}`);
      else lines.push(`# ${r.name}=${r.default ?? ""}`);
    }
    lines.push("");
  }
  return lines.join("\n");
}
