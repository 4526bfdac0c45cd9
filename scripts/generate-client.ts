import fs from "node:fs";
import path from "node:path";
import { CLIENT_TYPES_FILE, clientTypesSource } from "./lib/client-types";

/** `npm run client:generate`: regenerates client/schema.d.ts from the OpenAPI document the app builds. */
async function main() {
  const file = path.resolve(__dirname, "..", CLIENT_TYPES_FILE);
  const source = await clientTypesSource();
  const before = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : undefined;
  fs.writeFileSync(file, source);
  console.log(
    before === source
      ? `${CLIENT_TYPES_FILE} is up to date`
      : `wrote ${CLIENT_TYPES_FILE} (${source.length} characters)`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
