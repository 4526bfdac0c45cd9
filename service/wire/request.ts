/**
 * A request as the layers below HTTP read it: the values they need, declared here, never the HTTP framework's own
 * request type. The http layer and the routes hand on the request they hold (an Express request has these fields);
 * nothing below them imports the framework.
 */

/** The client's address, as TRUST_PROXY lets the proxies name it (what the per-IP limits count). */
export interface ClientAddress {
  readonly ip?: string;
}

/** A header's value by its name (any letter case), as the client sent it. */
export interface RequestHeaders {
  header(name: string): string | undefined;
}

/** Where the client reached the service: the scheme and the host name as the request names them. */
export interface RequestHost {
  readonly protocol: string;
  /** The host with its port (the Host header, or X-Forwarded-Host behind a trusted proxy). */
  readonly host: string;
  /** The host without its port. */
  readonly hostname: string;
}

/** What a paid call names of itself: its HTTP method, the path it matched and the URL it was called at. */
export interface CalledRoute {
  readonly method: string;
  readonly path: string;
  readonly originalUrl: string;
}

/** Everything the access gate and the use cases read of a request. */
export type RequestFacts = ClientAddress & RequestHeaders & RequestHost & CalledRoute;
