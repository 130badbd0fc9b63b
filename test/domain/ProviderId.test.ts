import { describe, expect, it } from "vitest"
import { machineIdentity } from "../../src/domain/ProviderId.ts"

describe("machineIdentity", () => {
  it.each([
    ["aws:///us-west-2a/i-0123456789abcdef0", "i-0123456789abcdef0", "aws"],
    ["aws:////i-0f1e2d3c4b5a69788", "i-0f1e2d3c4b5a69788", "aws"],
    ["gce://gpu-prod-123/us-central1-a/gke-gpu-a3-pool-8c1d2e3f-x7k2", "gke-gpu-a3-pool-8c1d2e3f-x7k2", "gcp"],
    [
      "azure:///subscriptions/9b1f4c7e-0000-4a6b-9a44-2b0d1c3e5f70/resourceGroups/mc_gpu_rg/providers/Microsoft.Compute/virtualMachines/aks-gpu-31415926-0",
      "aks-gpu-31415926-0",
      "azure",
    ],
    [
      "azure:///subscriptions/9b1f4c7e-0000-4a6b-9a44-2b0d1c3e5f70/resourceGroups/mc_gpu_rg_eastus/providers/Microsoft.Compute/virtualMachineScaleSets/aks-ndv5-27182818-vmss/virtualMachines/12",
      "aks-ndv5-27182818-vmss_12",
      "azure",
    ],
    ["kind://docker/gpu/gpu-worker2", "gpu-worker2", "kind"],
    ["openstack:///8a7bd5b0-5e8f-4bb4-8b0f-2c5d1a0f4c11", "8a7bd5b0-5e8f-4bb4-8b0f-2c5d1a0f4c11", "openstack"],
    ["openstack://RegionOne/8a7bd5b0-5e8f-4bb4-8b0f-2c5d1a0f4c11", "8a7bd5b0-5e8f-4bb4-8b0f-2c5d1a0f4c11", "openstack"],
    [
      "oci://ocid1.instance.oc1.iad.anuwcljt5xq2y3zexampleexample",
      "ocid1.instance.oc1.iad.anuwcljt5xq2y3zexampleexample",
      "oracle_cloud",
    ],
    [
      "ocid1.instance.oc1.phx.anyhqljt4bexampleexampleexample",
      "ocid1.instance.oc1.phx.anyhqljt4bexampleexampleexample",
      "oracle_cloud",
    ],
    ["vsphere://4237e4f2-2f6f-8f4c-5a9a-1b2c3d4e5f60", "4237e4f2-2f6f-8f4c-5a9a-1b2c3d4e5f60", "vsphere"],
    [
      "ibm://fee034388aa6435883a1f720010ab3a2///bp0hmbaf0j8qkrg0mf0g/kube-bp0hmbaf0j8qkrg0mf0g-gpu-default-00000356",
      "kube-bp0hmbaf0j8qkrg0mf0g-gpu-default-00000356",
      "ibm_cloud",
    ],
    ["digitalocean://412345678", "412345678", "digitalocean"],
  ])("%s gives machine %s", (providerId, machine, cloudProvider) => {
    expect(machineIdentity(providerId)).toEqual({ machine, cloudProvider })
  })

  it("gives `na` for an empty or missing providerID, so the record is still exported", () => {
    expect(machineIdentity(undefined)).toEqual({ machine: "na" })
    expect(machineIdentity("")).toEqual({ machine: "na" })
    expect(machineIdentity("   ")).toEqual({ machine: "na" })
  })

  it("keeps an unknown scheme's last segment and names no cloud", () => {
    expect(machineIdentity("metal://rack7/host-0042")).toEqual({ machine: "host-0042" })
  })

  it("does not mistake scale-set instances of different scale sets for one machine", () => {
    const base = "azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachineScaleSets"
    const a = machineIdentity(`${base}/pool-a-vmss/virtualMachines/0`).machine
    const b = machineIdentity(`${base}/pool-b-vmss/virtualMachines/0`).machine
    expect(a).not.toBe(b)
  })

  it("gives `na` for a known scheme with no instance part", () => {
    expect(machineIdentity("aws:///")).toEqual({ machine: "na", cloudProvider: "aws" })
  })
})
