import fs from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { referencePages } from "../../scripts/lib/reference-docs";
import { ERROR_CODES, ERROR_CODE_LIST } from "../../service/error-codes";
import { EVENT_TYPES } from "../../service/events/types";
import { PUBLIC_METHODS } from "../../service/methods";
import { allRoutes } from "../../service/app";
import type { Services } from "../../service/usecases/services";

const ROOT = path.resolve(__dirname, "../..");

/** docs/reference/ is written from the code; a page that differs from what the generator writes now is stale. */
describe("reference pages (docs/reference/, npm run docs:reference)", () => {
  const pages = referencePages();

  it("each committed page is what `npm run docs:reference` writes from the code now (else: run it)", () => {
    const committed = fs.readdirSync(path.join(ROOT, "docs", "reference")).map((name) => `docs/reference/${name}`);
    expect(committed.sort(), "docs/reference/ holds the generated pages").to.deep.equal(Object.keys(pages).sort());
    for (const [file, text] of Object.entries(pages)) {
      expect(fs.readFileSync(path.join(ROOT, file), "utf8"), `${file} is stale: npm run docs:reference`).to.equal(text);
    }
  });

  it("error-codes.md gives every code of the catalogue with its status", () => {
    const page = pages["docs/reference/error-codes.md"];
    for (const code of ERROR_CODE_LIST) expect(page, code).to.include(`| \`${code}\` | ${ERROR_CODES[code].status} |`);
  });

  it("metrics.md names the metrics the service registers, with their type and labels", () => {
    const page = pages["docs/reference/metrics.md"];
    expect(page).to.include("| `tak_http_requests_total` | counter | `method`, `route`, `status` |");
    expect(page).to.include("| `tak_http_request_duration_seconds` | histogram |");
    expect(page).to.include("| `tak_x402_settlement_failures_total` | counter | `cause` |");
    expect(page, "prom-client's defaults are summarised").not.to.include("| `tak_process_cpu_seconds_total`");
  });

  it("events.md has a section for every event type", () => {
    const page = pages["docs/reference/events.md"];
    for (const type of EVENT_TYPES) expect(page, type).to.include(`## \`${type}\``);
    expect(page).to.include("| `replacedHash` | 32-byte hex | yes |");
  });

  it("methods.md lists every documented route and every prepare method with its access", () => {
    const page = pages["docs/reference/methods.md"];
    for (const route of allRoutes({} as Services).filter((r) => !r.hidden)) {
      expect(page, route.path).to.include(`| ${route.method.toUpperCase()} | \`${route.path}\` |`);
    }
    expect(page, "hidden routes stay out").not.to.include("/admin/command");
    for (const method of PUBLIC_METHODS) {
      expect(page, method.name).to.match(new RegExp(`\\| \`${method.name}\`[^\\n]*\\| ${method.area} \\|`));
    }
    expect(page).to.include("| POST | `/prepare-transactions` | API key or x402 (write) |");
  });
});
