import fs from "node:fs";

/**
 * With TEST_TIMINGS=<file>, each test file's time from its first hook to its last is appended to that file as one JSON
 * line ({ file, ms }): what tells which tier a slow file belongs in (docs/testing.md).
 */
let startedAt = 0;

export const mochaHooks = {
  beforeAll() {
    startedAt = Date.now();
  },
  afterAll(this: Mocha.Context) {
    const root = this.test?.parent;
    const file = root?.file ?? root?.suites[0]?.file ?? "unknown";
    fs.appendFileSync(process.env.TEST_TIMINGS!, JSON.stringify({ file, ms: Date.now() - startedAt }) + "\n");
  },
};
