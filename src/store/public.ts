/**
 * The public surface of a class: its public members as a structural type.
 * Each SQLite store module (Sessions, Messages, Handoffs, ...) is a class
 * with private state; its PostgreSQL counterpart `implements Public<Class>`,
 * so both backends answer to one type without sharing private fields.
 */
export type Public<T> = { [K in keyof T]: T[K] };
