import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that run longest start first. On a clean checkout vitest has no
 * durations cached and starts the larger files first; the short torture run
 * (55 s, a small file) then started among the last and ran alone at the
 * end of a CI run. Failed-first and the cached durations still order
 * everything within each group.
 */
const LONG_FIRST = ["/test/torture/", "/test/e2e/"];

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const i = LONG_FIRST.findIndex((dir) => file.moduleId.includes(dir));
      return i === -1 ? LONG_FIRST.length : i;
    };
    return sorted
      .map((file, order) => ({ file, order }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.order - b.order)
      .map(({ file }) => file);
  }
}
