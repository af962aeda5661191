import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Gateways started by tests pick a free port (children inherit it).
    env: { HEARTH_GATEWAY_PORT: "0", HEARTH_DASHBOARD_PORT: "0" },
    reporters: ["default"],
  },
});
