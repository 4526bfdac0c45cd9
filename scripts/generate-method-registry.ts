import fs from "node:fs";
import { methodRegistrySource, REGISTRY_FILE } from "./lib/method-registry";

/** `npm run methods:generate`: writes service/methods/registry.ts, the list of every prepare method. */
void methodRegistrySource().then((source) => {
  fs.writeFileSync(REGISTRY_FILE, source);
  console.log("wrote service/methods/registry.ts");
});
