/**
 * One step of long maintenance work, as the work reports it: the operation,
 * its phase, and how far it is (`done` of `total` in `unit`). A phase with
 * nothing to count reports done = total = 1 when it ends.
 */
export interface StepProgress {
  op: string;
  phase: string;
  done: number;
  total: number;
  unit: "pages" | "steps" | "messages";
}

export type OnProgress = (step: StepProgress) => void;
