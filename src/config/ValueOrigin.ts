/** Where an effective value came from, by precedence: flag > env > file > default. */
export type OriginSource = "flag" | "env" | "file" | "default"

/**
 * The origin of one value and the key a user knows it by: the flag (`--workers`), the environment
 * variable (`WORKERS`) or the dotted path in the config file (`receivers.kube_exec.workers`). For a
 * default, the key is where the user would set it: the file path when the enclosing section is in the
 * config file, else the environment variable.
 */
export interface ValueOrigin {
  readonly source: OriginSource
  readonly key: string
}

/** Origins of the effective config by dotted file path (`exporters.stdout/audit.queueSize`). */
export type ConfigOrigins = Readonly<Record<string, ValueOrigin>>
