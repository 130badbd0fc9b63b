import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import type { ComponentKind, ConfigProblem, CreateSettings } from "../component/Component.ts"
import { ComponentConfigError } from "../component/ComponentConfigError.ts"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import { defectMessage } from "../log/ShortMessage.ts"
import type { Exporter, ExporterFactory } from "../pipeline/Exporter.ts"
import type { StoreFactory } from "../pipeline/InventoryStore.ts"
import type { BuiltinProcessor, BuiltinReceiver, ComponentFactories } from "./Distribution.ts"
import * as ExporterModule from "./ExporterModule.ts"

/**
 * One exporter of the pipeline: a built-in one with the config its own settings built, or one whose
 * section its factory validates here (a third-party module's, with `module` naming its package or path).
 */
export type ExporterEntry =
  | {
      /** `type` or `type/name`, as written in the config. */
      readonly id: string
      readonly type: string
      readonly config: unknown
    }
  | {
      readonly id: string
      readonly type: string
      /** A package name or a path of a third-party exporter module. */
      readonly module?: string
      /** The section as written (a `module` key in it is ignored). */
      readonly section: unknown
    }

/** What the service tells every component besides its own id. */
export type ServiceContext = Omit<CreateSettings, "id">

/** An exporter section that passed validation, ready to be created. */
export interface ConfiguredExporter {
  readonly id: string
  readonly type: string
  /** The validated config, defaults filled in. */
  readonly config: unknown
  readonly create: (settings: ServiceContext) => Effect.Effect<Exporter, ComponentStartError, Scope.Scope>
}

export interface ResolveOptions {
  /** The folder of the config file: relative `module` paths are resolved against it. */
  readonly baseDir: string
}

/** A third-party exporter answers under its section's id, whatever id it gave itself. */
const underId = (id: string, exporter: Exporter): Exporter => ({
  id,
  export: (events) => exporter.export(events),
  flush: (timeout) => exporter.flush(timeout),
  health: exporter.health,
  stats: exporter.stats,
  ...(exporter.capacity === undefined ? {} : { capacity: exporter.capacity }),
})

const configured = (
  id: string,
  factory: ExporterFactory,
  config: unknown,
  fromModule: boolean,
): ConfiguredExporter => ({
  id,
  type: factory.type,
  config,
  create: (settings) =>
    Effect.suspend(() => factory.create(config, { ...settings, id })).pipe(
      Effect.mapError((error: unknown) =>
        error instanceof ComponentStartError
          ? error
          : new ComponentStartError({ component: id, message: defectMessage(error) }),
      ),
      Effect.catchDefect((defect) =>
        Effect.fail(new ComponentStartError({ component: id, message: defectMessage(defect) })),
      ),
      Effect.flatMap((exporter) => {
        if (!fromModule) return Effect.succeed(exporter)
        const problems = ExporterModule.exporterShapeProblems(exporter)
        return problems.length === 0
          ? Effect.succeed(underId(id, exporter))
          : Effect.fail(
              new ComponentStartError({ component: id, message: `not a running exporter: ${problems.join("; ")}` }),
            )
      }),
    ),
})

const withoutModuleKey = (section: unknown): unknown => {
  if (!Predicate.isObject(section) || !("module" in section)) return section
  const { module: _module, ...rest } = section
  return rest
}

const isConfigProblem = (candidate: unknown): candidate is ConfigProblem =>
  Predicate.hasProperty(candidate, "key") &&
  Predicate.isString(candidate.key) &&
  Predicate.hasProperty(candidate, "message") &&
  Predicate.isString(candidate.message)

const validateSection = (
  factory: ExporterFactory,
  section: unknown,
): Result.Result<unknown, ReadonlyArray<ConfigProblem>> => {
  try {
    const outcome: unknown = factory.validate(section)
    if (!Result.isResult(outcome)) {
      return Result.fail([{ key: "", message: `validation of type "${factory.type}" returned no Result` }])
    }
    if (Result.isSuccess(outcome)) return Result.succeed(outcome.success)
    const reported = outcome.failure
    return Result.fail(
      Array.isArray(reported) && reported.length > 0 && reported.every(isConfigProblem)
        ? reported
        : [{ key: "", message: `validation of type "${factory.type}" failed without saying why` }],
    )
  } catch (defect) {
    return Result.fail([{ key: "", message: `validation of type "${factory.type}" failed: ${defectMessage(defect)}` }])
  }
}

const keyOf = (prefix: string, key: string): string => (key === "" ? prefix : `${prefix}.${key}`)

/**
 * The component factories by kind and type, as the Collector's `components()`: the pipeline
 * wiring asks it for factories and never knows a concrete component.
 */
export class ComponentRegistry extends Context.Service<
  ComponentRegistry,
  {
    /** The receiver factory of `type`, if the distribution has one. */
    readonly receiver: (type: string) => BuiltinReceiver | undefined
    /** The processor factory of `type`, if the distribution has one. */
    readonly processor: (type: string) => BuiltinProcessor | undefined
    /** The stores the inventory's `store` setting can name, in the order they claim a name. */
    readonly stores: ReadonlyArray<StoreFactory>
    /**
     * Validates every exporter section that is not yet a config against its factory (loading third-party
     * modules) and returns them ready to create, or every problem at once under `exporters.<id>.`.
     */
    readonly resolveExporters: (
      sections: ReadonlyArray<ExporterEntry>,
      options: ResolveOptions,
    ) => Effect.Effect<ReadonlyArray<ConfiguredExporter>, ComponentConfigError>
  }
>()("gpu-serials/service/ComponentRegistry") {
  static readonly make = (factories: ComponentFactories): ComponentRegistry["Service"] => {
    const byType = <F extends { readonly kind: ComponentKind; readonly type: string }>(
      kind: ComponentKind,
      list: ReadonlyArray<F>,
    ): ReadonlyMap<string, F> => {
      const map = new Map<string, F>()
      for (const factory of list) {
        if (factory.kind !== kind)
          throw new Error(`factory of type "${factory.type}" is a ${factory.kind}, not a ${kind}`)
        if (map.has(factory.type)) throw new Error(`${kind} type "${factory.type}" is registered twice`)
        map.set(factory.type, factory)
      }
      return map
    }
    const receivers = byType("receiver", factories.receivers ?? [])
    const processors = byType("processor", factories.processors ?? [])
    const exporters = byType("exporter", factories.exporters ?? [])

    const resolveExporter = (
      entry: ExporterEntry,
      options: ResolveOptions,
    ): Effect.Effect<Result.Result<ConfiguredExporter, ReadonlyArray<ConfigProblem>>> =>
      Effect.gen(function* () {
        const prefix = `exporters.${entry.id}`
        if ("config" in entry) {
          const builtin = exporters.get(entry.type)
          return builtin === undefined
            ? Result.fail([{ key: prefix, message: `unknown exporter type "${entry.type}"` }])
            : Result.succeed(configured(entry.id, builtin, entry.config, false))
        }
        let factory: ExporterFactory
        if (entry.module !== undefined) {
          const loaded = yield* ExporterModule.load(entry.module, options.baseDir).pipe(Effect.result)
          if (Result.isFailure(loaded)) {
            return Result.fail([
              { key: `${prefix}.module`, message: `module "${entry.module}" ${loaded.failure.message}` },
            ])
          }
          if (loaded.success.type !== entry.type) {
            return Result.fail([
              {
                key: `${prefix}.module`,
                message: `module "${entry.module}" provides exporter type "${loaded.success.type}", not "${entry.type}"`,
              },
            ])
          }
          factory = loaded.success
        } else {
          const builtin = exporters.get(entry.type)
          if (builtin === undefined) {
            return Result.fail([
              {
                key: prefix,
                message: `unknown exporter type "${entry.type}" (known: ${[...exporters.keys()].sort().join(", ")}; others need "module")`,
              },
            ])
          }
          factory = builtin
        }
        const validated = validateSection(factory, withoutModuleKey(entry.section))
        return Result.isSuccess(validated)
          ? Result.succeed(configured(entry.id, factory, validated.success, entry.module !== undefined))
          : Result.fail(
              validated.failure.map((problem) => ({ key: keyOf(prefix, problem.key), message: problem.message })),
            )
      })

    const resolveExporters = Effect.fn("ComponentRegistry.resolveExporters")(function* (
      sections: ReadonlyArray<ExporterEntry>,
      options: ResolveOptions,
    ): Effect.fn.Return<ReadonlyArray<ConfiguredExporter>, ComponentConfigError> {
      const outcomes = yield* Effect.forEach(sections, (entry) => resolveExporter(entry, options))
      const problems: Array<ConfigProblem> = []
      const seen = new Set<string>()
      for (const entry of sections) {
        if (seen.has(entry.id)) problems.push({ key: `exporters.${entry.id}`, message: "is defined more than once" })
        seen.add(entry.id)
      }
      const resolved: Array<ConfiguredExporter> = []
      for (const outcome of outcomes) {
        if (Result.isSuccess(outcome)) resolved.push(outcome.success)
        else problems.push(...outcome.failure)
      }
      if (problems.length > 0) return yield* new ComponentConfigError({ problems })
      return resolved
    })

    return ComponentRegistry.of({
      receiver: (type) => receivers.get(type),
      processor: (type) => processors.get(type),
      stores: factories.stores ?? [],
      resolveExporters,
    })
  }

  static readonly layer = (factories: ComponentFactories): Layer.Layer<ComponentRegistry> =>
    Layer.sync(ComponentRegistry, () => ComponentRegistry.make(factories))
}
