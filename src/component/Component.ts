import type * as Effect from "effect/Effect"
import type * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { ComponentStartError } from "./ComponentStartError.ts"

/** The three component kinds a pipeline wires together, as in an OpenTelemetry Collector. */
export type ComponentKind = "receiver" | "processor" | "exporter"

/** One configuration problem: the dotted key that caused it and a message a user can act on. */
export interface ConfigProblem {
  readonly key: string
  readonly message: string
}

export interface Health {
  readonly healthy: boolean
  /** Short reason when unhealthy (e.g. the last export error). */
  readonly message?: string
}

/**
 * A component type: its name in the config file, its default config, validation of its own
 * config section, and a constructor. Problems returned by `validate` carry keys relative to the
 * section (e.g. `queueSize`); the caller prefixes them with the section's path.
 */
export interface ComponentFactory<Kind extends ComponentKind, Config, Instance, Requirements = never> {
  readonly kind: Kind
  readonly type: string
  readonly defaultConfig: Config
  /** An absent section (`undefined` or `null`) means "all defaults". */
  readonly validate: (section: unknown) => Result.Result<Config, ReadonlyArray<ConfigProblem>>
  /**
   * Builds and starts the component; closing the scope shuts it down. Declared as a method so a
   * factory of a concrete config type can be held where any config is accepted (a registry): the
   * config it receives is always the one its own `validate` returned.
   */
  create(
    config: Config,
    settings: CreateSettings,
  ): Effect.Effect<Instance, ComponentStartError, Scope.Scope | Requirements>
}

/** What every component learns from the service at creation. */
export interface CreateSettings {
  /** The component id from the config, `type` or `type/name` (e.g. `nats/archive`). */
  readonly id: string
  readonly clusterName: string
  readonly serviceVersion: string
}
