import { expect } from "chai";
import { EngineError, type EngineErrorKind } from "../../service/engine/errors";
import { ApiError, badRequest } from "../../service/errors";
import { toApiError } from "../../service/http/error-mapping";

describe("http/error-mapping.ts: the lower layers' errors as the catalogue's answers", () => {
  it("gives each kind of engine error its code, with the message and details as thrown", () => {
    const codes: Record<EngineErrorKind, string> = {
      invalid: "BAD_REQUEST",
      "not-found": "NOT_FOUND",
      conflict: "CONFLICT",
      forbidden: "FORBIDDEN",
      "would-revert": "PREFLIGHT_FAILED",
      mismatch: "TRANSACTION_MISMATCH",
      "bad-signature": "INVALID_SIGNATURE",
      expired: "BATCH_EXPIRED",
      underpriced: "REPLACEMENT_UNDERPRICED",
      unavailable: "UNAVAILABLE",
    };
    for (const [kind, code] of Object.entries(codes) as [EngineErrorKind, string][]) {
      const answer = toApiError(new EngineError(kind, `refused: ${kind}`, { txId: "0xab" }));
      expect(answer, kind).to.be.instanceOf(ApiError);
      expect(answer!.code, kind).to.equal(code);
      expect(answer!.message, kind).to.equal(`refused: ${kind}`);
      expect(answer!.details, kind).to.deep.equal({ txId: "0xab" });
    }
  });

  it("answers invalid input from the engine in the one shape of invalid input (param, details.field, issues)", () => {
    const answer = toApiError(
      new EngineError("invalid", "txId: an array of txIds must repeat the same batch id", { field: "txId" }),
    )!;
    expect(answer.toBody()).to.deep.equal(
      badRequest("txId: an array of txIds must repeat the same batch id", { field: "txId" }).toBody(),
    );
    expect(answer.param).to.equal("txId");
    expect(answer.details?.issues).to.deep.equal([
      { field: "txId", message: "txId: an array of txIds must repeat the same batch id" },
    ]);
  });

  it("passes an ApiError as it is, and leaves anything else to the error handler", () => {
    const given = new ApiError("NOT_FOUND", "No such thing");
    expect(toApiError(given)).to.equal(given);
    expect(toApiError(new Error("a bug"))).to.equal(undefined);
    expect(toApiError({ type: "entity.parse.failed" })).to.equal(undefined);
  });
});
