import { lazyModule } from "../lazy-module";

/** x402's header codecs (PAYMENT-REQUIRED, PAYMENT-SIGNATURE, PAYMENT-RESPONSE), loaded with the first one read or written. */
export const x402Http = lazyModule<typeof import("@x402/core/http")>("@x402/core/http");

/** x402's server side, for the client of an external facilitator (X402_FACILITATOR_URL), loaded when one is made. */
export const x402Server = lazyModule<X402Server>("@x402/core/server");
export type X402Server = typeof import("@x402/core/server");
