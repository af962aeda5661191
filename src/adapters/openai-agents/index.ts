/**
 * hearth/openai-agents: an OpenAI Agents SDK Session on a hearth store.
 * Needs the optional peer dependency @openai/agents for its types; at run
 * time it loads nothing from it, and `import "hearth"` never loads it.
 */
export { HearthSession, type HearthSessionOptions } from "./session.js";
