import type { NewMessage } from "../store/types.js";
import type { Usage } from "./responder.js";

/**
 * The fields an assistant message stores of what its answer cost (issue
 * 47): the endpoint's prompt and completion tokens in the message's token
 * columns, and the model that answered in its metadata (`model`), which the
 * dashboard's price table (`dashboard.prices`) turns into a cost.
 */
export function usageFields(
  usage: Usage | undefined,
): Pick<NewMessage, "tokensIn" | "tokensOut" | "metadata"> {
  if (!usage) return {};
  return {
    tokensIn: usage.tokensIn,
    tokensOut: usage.tokensOut,
    ...(usage.model ? { metadata: { model: usage.model } } : {}),
  };
}
