import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { deploymentSchema } from "../service/chains/deployments";

/** deployments/deployment.schema.json: the JSON Schema of a deployment file, generated from the zod schema the service reads it with. */
export function deploymentJsonSchema(): Record<string, unknown> {
  return {
    ...(z.toJSONSchema(deploymentSchema, { target: "draft-2020-12" }) as Record<string, unknown>),
    $id: "https://tokenized-asset-api.local/deployments/deployment.schema.json",
    title: "A deployment of the contract suite on one chain (deployments/<chainId>.json)",
  };
}

export const DEPLOYMENT_SCHEMA_FILE = path.join(__dirname, "..", "deployments", "deployment.schema.json");

if (require.main === module) {
  fs.writeFileSync(DEPLOYMENT_SCHEMA_FILE, JSON.stringify(deploymentJsonSchema(), null, 2) + "\n");
  console.log(`written ${path.relative(process.cwd(), DEPLOYMENT_SCHEMA_FILE)}`);
}
