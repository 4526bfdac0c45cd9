import fs from "node:fs";
import { expect } from "chai";
import { METHODS } from "../../service/methods";
import type { MethodDefinition } from "../../service/methods/types";
import { EVENT_TYPES, STORE_TYPES } from "../../service/events/types";
import { methodExports, methodRegistrySource, orderedExports, REGISTRY_FILE } from "../../scripts/lib/method-registry";

describe("service/methods/registry.ts: every prepare method, generated from the methods' modules", function () {
  this.timeout(60_000);

  it("is what `npm run methods:generate` writes now (a method module added, removed or renamed: run it)", async () => {
    expect(fs.readFileSync(REGISTRY_FILE, "utf8")).to.equal(await methodRegistrySource());
  });

  it("lists every method a module under service/methods/ exports, once", async () => {
    const exported = (await methodExports()).map((e) => e.method.name);
    expect([...METHODS.map((m) => m.name)].sort()).to.deep.equal([...exported].sort());
    expect(new Set(exported).size).to.equal(exported.length);
  });

  it("holds every event type of the catalogue to the store, which writes its own, or to methods that declare it", () => {
    const declared = new Set(METHODS.flatMap((m) => m.events ?? []));
    for (const type of EVENT_TYPES)
      expect(STORE_TYPES.includes(type) || declared.has(type), `${type}: no method declares it`).to.equal(true);
    for (const type of declared) expect(STORE_TYPES, `${type} is the store's`).to.not.include(type);
    expect(METHODS.find((m) => m.name === "scheduleTokenUpgrade")?.events).to.deep.equal(["token.upgrade"]);
  });

  it("keeps the published order and puts a new method after the last one of its area", () => {
    const method = (name: string, area: MethodDefinition["area"]) => ({
      module: `./${area}/${name}`,
      exportName: name,
      method: { name, area } as MethodDefinition,
    });
    const exports = [
      method("newSto", "sto"),
      method("mintToken", "tokenization"),
      method("agentRegister", "agents"),
      method("burnToken", "tokenization"),
      method("lockToken", "tokenization"),
      method("ramsExecute", "rams"),
    ];
    const ordered = orderedExports(exports, ["mintToken", "burnToken", "newSto", "agentRegister", "gone"]);
    expect(ordered.map((e) => e.exportName)).to.deep.equal([
      "mintToken",
      "burnToken",
      "lockToken",
      "newSto",
      "agentRegister",
      "ramsExecute",
    ]);
  });
});
