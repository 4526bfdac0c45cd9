import { z } from "zod";
import { address, chainIdInput, executionMode, gasLimitField, nonceField } from "../wire/fields";
import { wireOnly } from "../wire/field-aliases";
/** Fields every prepare body may carry (docs/wire-conventions.md, What existing clients send). */
export const commonFields = {
  method: wireOnly(z.string().optional(), "the path or the tool names the method"),
  chainId: chainIdInput,
  executionMode: executionMode.optional(),
  gasLimit: gasLimitField.optional().meta({ description: "Overrides the estimated gas limit of every transaction" }),
  nonce: nonceField.optional().meta({ description: "First nonce to use instead of the signer's pending nonce" }),
};

export const signerFields = { ...commonFields, signerAddress: address };
