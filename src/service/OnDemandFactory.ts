import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ComponentFactory, ComponentKind } from "../component/Component.ts"
import { ComponentStartError } from "../component/ComponentStartError.ts"
import { type ComponentSettings, type Configured, configuredBy } from "../config/ComponentSettings.ts"
import { defectMessage } from "../log/ShortMessage.ts"
import type { InventoryStore, StoreDeclaration, StoreFactory } from "../pipeline/InventoryStore.ts"
import type { ElectorFactory } from "../pipeline/Leadership.ts"

/**
 * What the configuration needs of a component type, from light modules only: its kind, its name in the
 * config file and its settings. The rest of the factory lives in its implementation module, which
 * imports a heavy client library (Kubernetes, OpenTelemetry, NATS, PostgreSQL) at its top.
 */
export interface DeclaredComponent<Kind extends ComponentKind, Config> {
  readonly kind: Kind
  readonly type: string
  readonly settings: ComponentSettings<Config>
}

/** An implementation module's factory, imported when first needed (Node imports a module once). */
export type ImplementationOf<Factory> = () => Promise<Factory>

/** Imports the implementation; a module that cannot be loaded (a broken install) fails the component's start. */
export const imported = <Factory>(
  implementation: ImplementationOf<Factory>,
  component: string,
): Effect.Effect<Factory, ComponentStartError> =>
  Effect.tryPromise({
    try: implementation,
    catch: (cause) =>
      new ComponentStartError({ component, message: `cannot load its implementation: ${defectMessage(cause)}` }),
  })

/**
 * A factory as the distribution lists it: kind, type and settings at hand, so `version`, `parse` and
 * `config` never load a client library, and `create` importing the implementation's factory on its first
 * call. The implementation's own factory declares the same type and settings (a test holds them equal).
 */
export const onDemand = <Kind extends ComponentKind, Config, Instance, Requirements>(
  declared: DeclaredComponent<Kind, Config>,
  implementation: ImplementationOf<ComponentFactory<Kind, Config, Instance, Requirements>>,
): ComponentFactory<Kind, Config, Instance, Requirements> & Configured<Config> => ({
  kind: declared.kind,
  type: declared.type,
  ...configuredBy(declared.settings),
  create: (config, settings) =>
    imported(implementation, settings.id).pipe(Effect.flatMap((factory) => factory.create(config, settings))),
})

/** A receiver's elector, from the implementation's factory imported on first use. */
export const onDemandElector =
  <Config>(implementation: ImplementationOf<{ readonly elector: ElectorFactory<Config> }>): ElectorFactory<Config> =>
  (config, lease, settings) =>
    imported(implementation, settings.id).pipe(Effect.flatMap((factory) => factory.elector(config, lease, settings)))

/** A store the inventory can name, its implementation imported when the service opens it. */
export const onDemandStore = (
  declared: StoreDeclaration,
  implementation: ImplementationOf<StoreFactory>,
): StoreFactory => ({
  ...declared,
  create: (keeperConfig, settings): Effect.Effect<InventoryStore["Service"], ComponentStartError, Scope.Scope> =>
    imported(implementation, settings.id).pipe(Effect.flatMap((factory) => factory.create(keeperConfig, settings))),
})
