#!/usr/bin/env node
"use strict";
/**
 * `npm run admin`, `npm run migrate` and `npm run --silent mcp` (the MCP stdio server): the tools of every install. On
 * a server (`npm ci --omit=dev` with dist/ beside it) the compiled tool, with nothing from the development dependencies;
 * in a checkout with them, the sources through ts-node (no build needed). `node bin/run.js <admin|migrate|mcp> [arguments…]`.
 */
const fs = require("node:fs");
const path = require("node:path");

const TOOLS = { admin: "service/operator/admin", migrate: "service/operator/migrate", mcp: "service/mcp/stdio/main" };
const root = path.resolve(__dirname, "..");
const [tool] = process.argv.splice(2, 1);
if (!TOOLS[tool]) {
  console.error(`usage: node bin/run.js <${Object.keys(TOOLS).join("|")}> [arguments…]`);
  process.exit(2);
}

function hasTsNode() {
  try {
    require.resolve("ts-node", { paths: [root] });
    return true;
  } catch {
    return false;
  }
}

const built = path.join(root, "dist", `${TOOLS[tool]}.js`);
if (hasTsNode() && fs.existsSync(path.join(root, `${TOOLS[tool]}.ts`))) {
  process.env.TS_NODE_TRANSPILE_ONLY = "true";
  require(require.resolve("ts-node/register/transpile-only", { paths: [root] }));
  require(path.join(root, TOOLS[tool]));
} else if (fs.existsSync(built)) {
  require(built);
} else {
  console.error(
    `${path.relative(process.cwd(), built)} is missing: build first (npm run build) and copy dist/ beside package.json`,
  );
  process.exit(1);
}
