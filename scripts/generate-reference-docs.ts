import fs from "node:fs";
import path from "node:path";
import { configurationMarkdown, envExample } from "./lib/config-docs";
import { referencePages } from "./lib/reference-docs";

/**
 * `npm run docs:reference`: writes every page generated from the code: docs/reference/ (error codes, metrics, events,
 * routes and methods), docs/configuration.md and .env.example (`npm run config:docs` writes only those two).
 */
const ROOT = path.resolve(__dirname, "..");
const pages: Record<string, string> = {
  ...referencePages(),
  "docs/configuration.md": configurationMarkdown(),
  ".env.example": envExample(),
};
for (const [file, text] of Object.entries(pages)) {
  fs.mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
  fs.writeFileSync(path.join(ROOT, file), text);
}
console.log(`wrote ${Object.keys(pages).join(", ")}`);
