// `npm test`'s pretest: the build (which the tests' child processes run),
// the type check and the lint, side by side. Each is one mostly
// single-threaded process, so on a 2-CPU machine they take about as long
// as the type check alone instead of the three in a row. Each one's output
// is printed whole once it ends (never interleaved); the exit is the first
// failure's, or 0 when all three pass.
import { spawn } from "node:child_process";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const steps = ["build", "typecheck", "lint"];

const results = await Promise.all(
  steps.map(
    (step) =>
      new Promise((resolve) => {
        const child = spawn(npm, ["run", step, "--silent"], { stdio: ["ignore", "pipe", "pipe"] });
        let output = "";
        const collect = (d) => {
          output += d;
        };
        child.stdout.on("data", collect);
        child.stderr.on("data", collect);
        child.on("error", (err) => resolve({ step, code: 1, output: `${output}${err.message}\n` }));
        child.on("close", (code, signal) => {
          if (output !== "") process.stdout.write(output);
          resolve({ step, code: code ?? (signal ? 1 : 0), output });
        });
      }),
  ),
);
const failed = results.filter((r) => r.code !== 0);
for (const r of failed) console.error(`npm run ${r.step} failed (exit ${r.code})`);
process.exit(failed[0]?.code ?? 0);
