/** The PostgreSQL server the tests use when HEARTH_TEST_PG_URL is unset and it answers (docs/testing.md). */
export const DEFAULT_PG_URL = "postgres://hearth_test:hearth_test@127.0.0.1:5432/hearth_test";
