import type { CheckpointSaverTestInitializer } from "@langchain/langgraph-checkpoint-validation";
import * as vitest from "vitest";
import { HearthSaver } from "../../../src/adapters/langgraph/index.js";
import { tempHome } from "../../helpers/home.js";

// LangGraph's official conformance suite for checkpoint savers, run on a
// real store. The suite calls Jest-style globals, which this project's
// vitest config does not install: hand it vitest's own before loading it.
Object.assign(globalThis, {
  describe: vitest.describe,
  it: vitest.it,
  expect: vitest.expect,
  beforeAll: vitest.beforeAll,
  afterAll: vitest.afterAll,
  beforeEach: vitest.beforeEach,
  afterEach: vitest.afterEach,
});
const { deltaChannelHistoryTests, validate } = await import(
  "@langchain/langgraph-checkpoint-validation"
);

// Every checkpointer the suite asks for gets a store of its own (the suite
// needs them isolated), in a temp home removed after the file.
const initializer: CheckpointSaverTestInitializer<HearthSaver> = {
  checkpointerName: "hearth",
  createCheckpointer: () => HearthSaver.open({ home: tempHome() }),
  destroyCheckpointer: (saver) => saver.close(),
};

validate(initializer);
// Opt-in in the suite (the method is beta), run by LangGraph's own savers: run it too.
deltaChannelHistoryTests(initializer);
