import type { Knex } from 'knex';

/**
 * The columns of a long operation's row (GROUPS §3: queued → running → succeeded | failed |
 * cancelled): its state, its result and error (JSON text, set when
 * it ends), who asked for it, and when it started and finished. `created_at` is left to the
 * table (some tables take it with updated_at).
 */
export function jobColumns(t: Knex.CreateTableBuilder): void {
  t.string('state', 16).notNullable();
  t.text('result');
  t.text('error');
  t.string('created_by', 128).notNullable();
  t.string('started_at', 32);
  t.string('finished_at', 32);
}

/**
 * Applied migrations whose code was rewritten to use these helpers without changing the
 * tables they make: the checksum they were applied with is accepted once and replaced by
 * the new one (core/db.ts checks every applied migration's checksum at start).
 */
export const REWRITTEN_MIGRATIONS: Record<string, string> = {
  'aiops/001_aiops': '70d8786c2d7852a1d37db28a25ab122a27c97e9828676932e222b17f9cf3f5a9',
  'commercial/001_commercial': 'c94923bf450b257548a2d2954c57d76bdd4d84357bac43ef7517afef48298da0',
  'stability/001_stability': '87cbfbe46135c635da97935b24badddd05a7a94b0bd6abd626e627b67b1a2594',
  'uaicp/001_uaicp': '1eb709380639c85a180bcb75610ee649c27cb62268b7a76d24b9a0aa3b3b582d',
  'agi/001_agi': '87a8d43fa7e32a9429bc531a97462605a1a6e2ecd74282cbb82a45aa85f3d640',
};
