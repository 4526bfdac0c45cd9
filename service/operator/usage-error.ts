/**
 * A bad argument on the admin tool's command line: the message names the flag, with the valid values where there is a
 * list of them. The tool exits 2 on it.
 */
export class UsageError extends Error {}
