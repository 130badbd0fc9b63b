import { type Resource, resourceFromAttributes } from "@opentelemetry/resources"
import { ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions"
import type { InventoryEvent } from "../../domain/InventoryEvent.ts"
import { machineIdentity, unknownMachine } from "../../domain/ProviderId.ts"

/** What every node's Resource shares: the service's identity and the configured extra attributes. */
export interface ServiceIdentity {
  readonly serviceName: string
  readonly serviceVersion: string
  readonly serviceInstanceId: string
  /** `OTEL_RESOURCE_ATTRIBUTES`; the attributes set here win over them. */
  readonly resourceAttributes: Readonly<Record<string, string>>
}

/** Nodes remembered at most; past it the cache starts over (a cluster has far fewer GPU nodes). */
const maxCachedNodes = 10_000

/**
 * One Resource per node, cached: the OTLP serializers group log records by Resource object identity,
 * so every record of a node must carry the same object for a request to hold one ResourceLogs per node.
 */
export interface NodeResources {
  readonly of: (event: InventoryEvent) => Resource
}

export const makeNodeResources = (service: ServiceIdentity): NodeResources => {
  const cache = new Map<string, Resource>()
  const of = (event: InventoryEvent): Resource => {
    const { record, origin } = event
    const key = JSON.stringify([
      record.cluster,
      record.node,
      origin.nodeUid ?? "",
      record.machine,
      record.providerId ?? "",
    ])
    const cached = cache.get(key)
    if (cached !== undefined) return cached
    const attributes: Record<string, string> = {
      ...service.resourceAttributes,
      [ATTR_SERVICE_NAME]: service.serviceName,
      [ATTR_SERVICE_VERSION]: service.serviceVersion,
      [ATTR_SERVICE_INSTANCE_ID]: service.serviceInstanceId,
      "k8s.cluster.name": record.cluster,
      "k8s.node.name": record.node,
    }
    if (origin.nodeUid !== undefined && origin.nodeUid !== "") attributes["k8s.node.uid"] = origin.nodeUid
    // `na` names no machine: sent as host.id it would make every unidentified node one host.
    if (record.machine !== unknownMachine && record.machine !== "") attributes["host.id"] = record.machine
    const cloudProvider = machineIdentity(record.providerId).cloudProvider
    if (cloudProvider !== undefined) attributes["cloud.provider"] = cloudProvider
    const resource = resourceFromAttributes(attributes)
    if (cache.size >= maxCachedNodes) cache.clear()
    cache.set(key, resource)
    return resource
  }
  return { of }
}
