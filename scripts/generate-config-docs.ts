import fs from "node:fs";
import path from "node:path";
import { configurationMarkdown, envExample } from "./lib/config-docs";

/** `npm run config:docs`: writes docs/configuration.md and .env.example from the configuration's schema. */
const ROOT = path.resolve(__dirname, "..");
fs.writeFileSync(path.join(ROOT, "docs", "configuration.md"), configurationMarkdown());
fs.writeFileSync(path.join(ROOT, ".env.example"), envExample());
console.log("wrote docs/configuration.md and .env.example");
