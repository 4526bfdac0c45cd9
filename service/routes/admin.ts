import { timingSafeEqual } from "node:crypto";
import type { Request } from "express";
import { z } from "zod";
import { runAdminCommand, type AdminCommand, type AdminContext } from "../operator/commands";
import type { RelayerKeysContext } from "../operator/relayer-keys";
import { unauthorized } from "../errors";
import { ACCESS } from "../auth/access-rules";
import { guardInput } from "../http/input-guard";
import { defineRoute } from "../http/route";
import type { Services } from "../usecases/services";

/**
 * Operator commands over HTTP, so `npm run admin` works while the service holds the embedded (single-process)
 * database. Guarded by ADMIN_TOKEN (in the local sandbox, the token it keeps in <DATA_DIR>/sandbox/admin-token); not
 * in OpenAPI.
 */
/** The relayer's configured keys and how this instance holds each: what relayer-keys commands check against. */
function relayerKeysContext(services: Services): RelayerKeysContext {
  return {
    configured: new Map(
      [...services.wallets.relayer].map(([chainId, signers]) => [chainId, signers.map((s) => s.address)]),
    ),
    settlement: services.wallets.settlement?.address,
    standing: (chainId, address) => services.relayer.keys.standing(chainId, address),
  };
}

/** The commands whose body carries an operator's password (`npm run admin -- operators add|password --password-file`). */
const TAKES_PASSWORD = new Set(["operators.add", "operators.password"]);

export function adminRoutes(services: Services, options: { token: string } & AdminContext) {
  const expected = Buffer.from(options.token);
  const authorize = (req: Request) => {
    const given = Buffer.from(req.header("x-admin-token") ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw unauthorized("Admin token required", { header: "x-admin-token" });
  };
  return [
    defineRoute({
      method: "post",
      path: "/admin/command",
      summary: "Run an operator command",
      tags: ["admin"],
      access: ACCESS.public, // guarded by the operator token below, not by a key
      hidden: true,
      response: z.looseObject({ result: z.unknown() }),
      body: z.looseObject({ command: z.string() }),
      // The input guard runs in the handler: a field named like a secret is refused there as anywhere, but for the
      // operator's password of the two commands that set one (a password is not a wallet's key).
      guardsOwnInput: true,
      handler: async ({ req, body }) => {
        guardInput(body, "body", TAKES_PASSWORD.has(String(body.command)) ? ["password"] : []);
        authorize(req);
        const command = body as unknown as AdminCommand;
        const consoleLinks = { baseUrl: services.baseUrl, linkTtlMs: services.config.CONSOLE_SIGN_IN_LINK_TTL };
        const result = await runAdminCommand(services, command, {
          operations: options.operations,
          relayer: relayerKeysContext(services),
          console: consoleLinks,
        });
        // This instance follows a relayer key decision at once; the others within their next refresh.
        if (command.command.startsWith("relayer-keys.") && command.command !== "relayer-keys.list")
          await services.relayerKeyRotation.refresh();
        return { result };
      },
    }),
  ];
}
