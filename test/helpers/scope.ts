/**
 * Whether a test is running now. What a test creates (children, homes) is
 * cleaned up after that test; what a file's beforeAll creates lives until
 * the file's afterAll (setup.ts drives both).
 */
export const scope = { inTest: false };
