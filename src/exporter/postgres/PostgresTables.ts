/**
 * The exporter's tables in one schema: `<table>` the history, one row per event; `<table>_current`
 * one row per GPU of a cluster; `<table>_migrations` the schema versions applied. Names are checked
 * identifiers (letters, digits, `_`), quoted so that PostgreSQL keeps their case.
 */
export interface PostgresTables {
  readonly schema: string
  readonly table: string
  /** `"schema"."table"`, ready for SQL. */
  readonly history: string
  readonly current: string
  readonly migrations: string
  /** `schema.table`, as messages name the history table. */
  readonly display: string
}

const quote = (identifier: string): string => `"${identifier.replaceAll('"', '""')}"`

export const postgresTables = (schema: string, table: string): PostgresTables => ({
  schema,
  table,
  history: `${quote(schema)}.${quote(table)}`,
  current: `${quote(schema)}.${quote(`${table}_current`)}`,
  migrations: `${quote(schema)}.${quote(`${table}_migrations`)}`,
  display: `${schema}.${table}`,
})

/** An index name of a table: `<table>_<suffix>`, quoted. */
export const indexName = (tables: PostgresTables, suffix: string): string => quote(`${tables.table}_${suffix}`)

export const quotedSchema = (tables: PostgresTables): string => quote(tables.schema)
