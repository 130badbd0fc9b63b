/**
 * A node's `spec.providerID` read as a machine identity. The machine id is what stays attached to
 * the hardware's host when the Kubernetes node object is recreated; `na` when the node has none.
 */
export interface MachineIdentity {
  readonly machine: string
  /** OpenTelemetry `cloud.provider` value, when the scheme names a known cloud. */
  readonly cloudProvider?: string
}

export const unknownMachine = "na"

const cloudProviders: Readonly<Record<string, string>> = {
  aws: "aws",
  gce: "gcp",
  azure: "azure",
  ibm: "ibm_cloud",
  oci: "oracle_cloud",
  alicloud: "alibaba_cloud",
  digitalocean: "digitalocean",
  hcloud: "hetzner",
  linode: "linode",
  openstack: "openstack",
  vsphere: "vsphere",
  equinixmetal: "equinix_metal",
  kind: "kind",
}

const schemePattern = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i
const azureScaleSetPattern = /\/virtualMachineScaleSets\/([^/]+)\/virtualMachines\/([^/]+)\/?$/i
const azureVirtualMachinePattern = /\/virtualMachines\/([^/]+)\/?$/i

export const machineIdentity = (providerId: string | undefined): MachineIdentity => {
  const trimmed = providerId?.trim() ?? ""
  if (trimmed === "") return { machine: unknownMachine }
  const schemed = schemePattern.exec(trimmed)
  if (schemed === null) {
    // OKE and some bare-metal providers publish the instance id without a scheme.
    return trimmed.startsWith("ocid1.") ? { machine: trimmed, cloudProvider: "oracle_cloud" } : { machine: trimmed }
  }
  const scheme = (schemed[1] ?? "").toLowerCase()
  const rest = schemed[2] ?? ""
  const cloudProvider = cloudProviders[scheme]
  const machine = scheme === "azure" ? azureMachine(rest) : lastSegment(rest)
  if (machine === undefined)
    return cloudProvider === undefined ? { machine: unknownMachine } : { machine: unknownMachine, cloudProvider }
  return cloudProvider === undefined ? { machine } : { machine, cloudProvider }
}

/** Scale-set instances are named `<scale set>_<instance>` by Azure: the bare index alone is not unique. */
const azureMachine = (path: string): string | undefined => {
  const scaleSet = azureScaleSetPattern.exec(path)
  if (scaleSet !== null) return `${scaleSet[1]}_${scaleSet[2]}`
  const virtualMachine = azureVirtualMachinePattern.exec(path)
  return virtualMachine === null ? lastSegment(path) : virtualMachine[1]
}

const lastSegment = (path: string): string | undefined => {
  const segments = path.split("/").filter((segment) => segment !== "")
  return segments.at(-1)
}
