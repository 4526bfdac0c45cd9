/**
 * A package required on its first use instead of at start. What only some requests need (x402's header codecs and
 * facilitator client, multipart uploads) then costs an idle service nothing: a module's code and data stay in memory
 * for the life of the process once loaded. The first call loads it synchronously (a few milliseconds for these); every
 * call answers the same module. `specifier` is a package name (resolved as from any service module).
 */
export function lazyModule<T>(specifier: string): () => T {
  let loaded: T | undefined;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the point: loaded on first use, not at import
  return () => (loaded ??= require(specifier) as T);
}
