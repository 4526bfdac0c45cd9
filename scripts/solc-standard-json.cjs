#!/usr/bin/env node
/*
 * The `solc` command line that Foundry's forge needs offline, on the npm `solc` package (the compiler Hardhat uses
 * here): forge cannot download a native compiler without a network, so foundry.toml points `solc` at this file.
 * forge asks it two things only:
 *   --version            answered with the line forge parses (`Version: 0.8.28+commit.7893614a...`);
 *   --standard-json      the compiler's JSON input on stdin, its JSON output on stdout.
 * forge sends every source's content in the input; a file it left out is read from the file system by the import
 * callback, relative to --base-path, then each --include-path, then the working directory (as solc resolves them).
 */
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const solc = require("solc");

function option(args, name) {
  const values = [];
  args.forEach((arg, i) => {
    if (arg === name && i + 1 < args.length) values.push(...args[i + 1].split(","));
    else if (arg.startsWith(`${name}=`)) values.push(...arg.slice(name.length + 1).split(","));
  });
  return values.filter(Boolean);
}

function importCallback(roots) {
  return (importPath) => {
    for (const root of roots) {
      const file = path.resolve(root, importPath);
      if (fs.existsSync(file) && fs.statSync(file).isFile()) return { contents: fs.readFileSync(file, "utf8") };
    }
    return { error: `File not found: ${importPath} (looked under ${roots.join(", ")})` };
  };
}

function main(args) {
  if (args.includes("--version")) {
    process.stdout.write(`solc, the solidity compiler commandline interface\nVersion: ${solc.version()}\n`);
    return 0;
  }
  if (!args.includes("--standard-json")) {
    process.stderr.write("usage: solc-standard-json.cjs --version | --standard-json < input.json\n");
    return 2;
  }
  const roots = [...option(args, "--base-path"), ...option(args, "--include-path"), process.cwd()];
  const input = fs.readFileSync(0, "utf8");
  const output = solc.compile(input, { import: importCallback(roots) });
  process.stdout.write(output);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
