/** The logging surface hearth uses; pino loggers fit it. The library is silent without one. */
export interface Logger {
  warn(fields: Record<string, unknown>, message: string): void;
  info?(fields: Record<string, unknown>, message: string): void;
}
