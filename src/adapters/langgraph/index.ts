/**
 * hearth/langgraph: a LangGraph.js checkpoint saver on a hearth store.
 * Needs the optional peer dependencies @langchain/langgraph-checkpoint and
 * @langchain/core; `import "hearth"` never loads them.
 */
export { HearthSaver } from "./saver.js";
