// Shared with the store's Markdown export (src/printable.ts).
export { printable } from "../printable.js";
