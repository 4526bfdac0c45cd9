import { z } from "zod";
import { booleanish } from "../../wire/fields";

/** The ERC-8004 registration file type (reference: "registration-v1"). */
export const REGISTRATION_TYPE = "https://eips.ethereum.org/EIPS/eip-8004#registration-v1";

const uri = z
  .string()
  .trim()
  .min(1, "is required")
  .max(4096)
  .regex(/^(https?:\/\/|ipfs:\/\/|ar:\/\/|data:)\S+$/i, "must be a URI (https://, ipfs://, ar:// or data:)");

const service = z.object({
  name: z.string().trim().min(1).max(100),
  endpoint: z.string().trim().min(1).max(2048),
  version: z.string().trim().max(50).optional(),
});

const shortText = (max: number) => z.string().trim().max(max);

/**
 * The agent profile a registration file holds (ERC-8004's registration file). Required at registration:
 * name, description, image, services; every field is optional on agentSetURI, where the given ones replace the old.
 */
export const profileFields = {
  name: shortText(200).min(1, "is required"),
  description: shortText(5000).min(1, "is required"),
  image: uri.meta({ description: "Public image URI; without it: image is required" }),
  services: z.array(service).min(1, "must list at least one service { name, endpoint, version? }").max(50),
  metadata: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "Free-form profile metadata kept in the registration file" }),
  aiModelName: shortText(200).optional(),
  aiModelProvider: shortText(200).optional(),
  tags: z.array(shortText(100)).max(50).optional(),
  version: shortText(50).optional(),
  documentation: uri.optional(),
  sourceCode: uri.optional(),
  license: shortText(100).optional(),
  agentType: shortText(100).optional(),
  supportedTrust: z.array(shortText(100)).max(20).optional(),
  x402Support: booleanish.optional(),
  active: booleanish.optional(),
  registrations: z
    .array(
      z.looseObject({ agentId: z.union([z.number(), z.string()]).optional(), agentRegistry: z.string().optional() }),
    )
    .max(20)
    .optional(),
};

const PROFILE_KEYS = Object.keys(profileFields) as (keyof typeof profileFields)[];
export type Profile = Partial<{ [K in keyof typeof profileFields]: z.infer<(typeof profileFields)[K]> }>;

/** The profile fields present in a parsed body. */
export function profileOf(body: Record<string, unknown>): Profile {
  return Object.fromEntries(PROFILE_KEYS.filter((k) => body[k] !== undefined).map((k) => [k, body[k]]));
}

/**
 * The registration file (ERC-8004 "registration-v1"): type, the profile, and this chain's registration first. Fields
 * of `previous` the change does not name are kept (agentSetURI).
 */
export function registrationFile(
  change: Profile,
  where: { chainId: number; registry: string; agentId?: string },
  previous: Record<string, unknown> = {},
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...previous, ...change };
  const ours = {
    agentId: where.agentId === undefined ? null : Number(where.agentId),
    agentRegistry: `eip155:${where.chainId}:${where.registry}`,
  };
  const others = ((merged.registrations as { agentRegistry?: string }[] | undefined) ?? []).filter(
    (r) => String(r.agentRegistry ?? "").toLowerCase() !== ours.agentRegistry.toLowerCase(),
  );
  const { name, description, image, services, x402Support, active, supportedTrust, ...rest } = merged;
  delete rest.type;
  delete rest.registrations;
  return {
    type: REGISTRATION_TYPE,
    name,
    description,
    image,
    services,
    x402Support: x402Support ?? false,
    active: active ?? true,
    registrations: [ours, ...others],
    ...(supportedTrust ? { supportedTrust } : {}),
    ...rest,
  };
}
