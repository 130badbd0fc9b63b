import { Environment } from "@marcbachmann/cel-js"
import { describe, expect, it } from "vitest"
import { KubeApiError, kindOfStatus } from "../../src/kubeclient/rest/KubeApiError.ts"
import { csvQueryArgv, xmlQueryArgv } from "../../src/nvsmi/Command.ts"
import { execArgvFor } from "../../src/nvsmi/ExecArgv.ts"
import { draDefaults } from "../../src/receiver/kube/KubeExecConfig.ts"
import { failureOfExec } from "../../src/receiver/kube/ReadFailure.ts"
import { deploymentOf, kustomize, kustomizeOverlay, type Manifest, ofKind } from "./RenderedManifests.ts"

interface Validation {
  readonly expression: string
  readonly message?: string
  readonly reason?: string
}

interface PolicySpec {
  readonly failurePolicy?: string
  readonly matchConstraints: { readonly resourceRules: ReadonlyArray<unknown> }
  readonly matchConditions: ReadonlyArray<{ readonly name: string; readonly expression: string }>
  readonly validations: ReadonlyArray<Validation>
}

interface BindingSpec {
  readonly policyName: string
  readonly validationActions: ReadonlyArray<string>
  readonly paramRef?: unknown
}

/** One exec as the caller asks for it: the argv (null when the request names no command), stdin and TTY. */
interface Exec {
  readonly command: ReadonlyArray<string> | null
  readonly stdin?: boolean
  readonly tty?: boolean
}

/**
 * How the API server hands PodExecOptions to CEL: converted to unstructured, so a false or empty field
 * (`omitempty`) is absent, while `command` (no `omitempty`) is null when the request names none.
 * `allFields` writes every field, false ones included, as a client-side rendering would.
 */
const podExecOptions = (exec: Exec, allFields = false) => {
  const flag = (name: string, value: boolean) => (value || allFields ? { [name]: value } : {})
  return {
    kind: "PodExecOptions",
    apiVersion: "v1",
    command: exec.command,
    container: "nvidia-device-plugin",
    ...flag("stdin", exec.stdin ?? false),
    stdout: true,
    stderr: true,
    ...flag("tty", exec.tty ?? false),
  }
}

const serviceAccountGroups = (namespace: string) => [
  "system:serviceaccounts",
  `system:serviceaccounts:${namespace}`,
  "system:authenticated",
]

/** The CEL activation of a CONNECT on pods/exec: the variables a ValidatingAdmissionPolicy's expressions see. */
const execActivation = (
  username: string,
  exec: Exec,
  groups: ReadonlyArray<string> = ["system:authenticated"],
  allFields = false,
) => ({
  object: podExecOptions(exec, allFields),
  oldObject: null,
  params: null,
  request: {
    uid: "5d1b8f4e-6c1a-4d8e-9a57-1f0c2b7e9d31",
    kind: { group: "", version: "v1", kind: "PodExecOptions" },
    resource: { group: "", version: "v1", resource: "pods" },
    subResource: "exec",
    name: "nvidia-device-plugin-daemonset-x7k2p",
    namespace: "gpu-operator",
    operation: "CONNECT",
    userInfo: { username, groups },
    dryRun: false,
  },
})

/** Standard CEL with the admission variables, all dynamic as the API server declares them. */
const admissionCel = new Environment()
  .registerVariable("object", "dyn")
  .registerVariable("oldObject", "dyn")
  .registerVariable("request", "dyn")
  .registerVariable("params", "dyn")

const holds = (expression: string, activation: ReturnType<typeof execActivation>): boolean => {
  const value: unknown = admissionCel.evaluate(expression, activation)
  if (typeof value !== "boolean") throw new Error(`${expression} evaluated to ${String(value)}, not a bool`)
  return value
}

type Decision =
  | { readonly _tag: "NotMatched" }
  | { readonly _tag: "Allowed" }
  | { readonly _tag: "Denied"; readonly message: string | undefined; readonly reason: string | undefined }

/**
 * What the API server decides: the policy applies only when every matchCondition holds; then the exec is
 * refused with the message of the first validation that does not. An expression that fails to evaluate
 * throws here, where the API server would refuse with its error instead of the policy's message.
 */
const decide = (policy: PolicySpec, activation: ReturnType<typeof execActivation>): Decision => {
  if (!policy.matchConditions.every((condition) => holds(condition.expression, activation))) {
    return { _tag: "NotMatched" }
  }
  const failing = policy.validations.find((validation) => !holds(validation.expression, activation))
  return failing === undefined
    ? { _tag: "Allowed" }
    : { _tag: "Denied", message: failing.message, reason: failing.reason }
}

const onlyOne = (manifests: ReadonlyArray<Manifest>, kind: string): Manifest => {
  const found = ofKind(manifests, kind)
  if (found.length !== 1) throw new Error(`expected one ${kind}, rendered ${found.length}`)
  return found[0] as Manifest
}

/** `system:serviceaccount:<namespace>:<name>` of the variant's one ServiceAccount, the service's. */
const serviceAccountOf = (manifests: ReadonlyArray<Manifest>) => {
  const account = onlyOne(manifests, "ServiceAccount")
  const namespace = account.metadata.namespace ?? ""
  expect(deploymentOf(manifests).spec.template.spec.serviceAccountName).toBe(account.metadata.name)
  return { username: `system:serviceaccount:${namespace}:${account.metadata.name}`, namespace }
}

/** The phrase of each validation's message: which check refused. */
const refusal = {
  program: "may exec only nvidia-smi",
  arguments: "with no other argument",
  stdin: "stdin",
  tty: "TTY",
} as const

describe("deploy/examples/exec-policy: a ValidatingAdmissionPolicy on the service's exec", () => {
  const manifests = kustomize("deploy/examples/exec-policy")
  const policyManifest = onlyOne(manifests, "ValidatingAdmissionPolicy")
  const policy = policyManifest.spec as PolicySpec
  const binding = onlyOne(manifests, "ValidatingAdmissionPolicyBinding").spec as BindingSpec
  const service = serviceAccountOf(manifests)
  const asService = (exec: Exec, allFields = false) =>
    decide(policy, execActivation(service.username, exec, serviceAccountGroups(service.namespace), allFields))

  it("applies to CONNECT on pods/exec only, and refuses when an expression cannot be evaluated", () => {
    expect(policy.matchConstraints.resourceRules).toEqual([
      { apiGroups: [""], apiVersions: ["v1"], operations: ["CONNECT"], resources: ["pods/exec"] },
    ])
    expect(policy.failurePolicy).toBe("Fail")
    expect(policyManifest.apiVersion).toBe("admissionregistration.k8s.io/v1")
  })

  it("is bound by name, denying (not only auditing or warning), with no parameters", () => {
    expect(binding.policyName).toBe(policyManifest.metadata.name)
    expect(binding.validationActions).toEqual(["Deny"])
    expect(binding.paramRef).toBeUndefined()
  })

  it.each([
    ["the XML query", xmlQueryArgv],
    ["the CSV query", csvQueryArgv],
  ])("lets the service's account run %s the service runs, without stdin or TTY", (_, argv) => {
    expect(asService({ command: argv })).toEqual({ _tag: "Allowed" })
    expect(asService({ command: argv, stdin: false, tty: false }, true)).toEqual({ _tag: "Allowed" })
  })

  it("accepts nvidia-smi by its path, and a --query-gpu list with fields a later release may add", () => {
    expect(asService({ command: ["/usr/bin/nvidia-smi", "-q", "-x"] })).toEqual({ _tag: "Allowed" })
    expect(
      asService({
        command: [
          "nvidia-smi",
          "--query-gpu=index,serial,platform.chassis_serial_number,clocks.max.sm_2",
          "--format=csv,noheader",
        ],
      }),
    ).toEqual({ _tag: "Allowed" })
  })

  it.each<[string, Exec, keyof typeof refusal]>([
    ["a shell", { command: ["/bin/sh", "-c", "nvidia-smi"] }, "program"],
    ["a shell by name", { command: ["sh", "-c", "nvidia-smi -q -x"] }, "program"],
    ["another program named like nvidia-smi", { command: ["/tmp/nvidia-smi", "-q", "-x"] }, "program"],
    ["an empty command", { command: [] }, "program"],
    ["no command at all", { command: null }, "program"],
    ["a GPU reset (-r)", { command: ["nvidia-smi", "-r"] }, "arguments"],
    ["a GPU reset (--gpu-reset -i 0)", { command: ["nvidia-smi", "--gpu-reset", "-i", "0"] }, "arguments"],
    ["persistence mode (-pm 1)", { command: ["nvidia-smi", "-pm", "1"] }, "arguments"],
    ["shell syntax in an argument", { command: ["nvidia-smi", "-q", "-x; rm"] }, "arguments"],
    ["shell syntax as more arguments", { command: ["nvidia-smi", "-q", "-x;", "rm"] }, "arguments"],
    ["an extra argument", { command: ["nvidia-smi", "-q", "-x", "extra"] }, "arguments"],
    ["the arguments in another order", { command: ["nvidia-smi", "-x", "-q"] }, "arguments"],
    ["nvidia-smi without arguments", { command: ["nvidia-smi"] }, "arguments"],
    [
      "a CSV query writing a file",
      { command: ["nvidia-smi", "--query-gpu=serial", "--format=csv,noheader", "-f", "/tmp/x"] },
      "arguments",
    ],
    [
      "a field list with shell syntax",
      { command: ["nvidia-smi", "--query-gpu=serial;id", "--format=csv,noheader"] },
      "arguments",
    ],
    ["an empty field list", { command: ["nvidia-smi", "--query-gpu=", "--format=csv,noheader"] }, "arguments"],
    ["another CSV format", { command: ["nvidia-smi", "--query-gpu=serial", "--format=csv"] }, "arguments"],
    ["stdin", { command: xmlQueryArgv, stdin: true }, "stdin"],
    ["a TTY", { command: csvQueryArgv, tty: true }, "tty"],
  ])("refuses the service's account %s, with that check's message", (_, exec, check) => {
    const decision = asService(exec)
    expect(decision._tag).toBe("Denied")
    if (decision._tag !== "Denied") return
    expect(decision.message).toContain(refusal[check])
    expect(decision.reason).toBe("Forbidden")
  })

  it.each([
    ["kubernetes-admin", ["system:masters", "system:authenticated"]],
    ["system:serviceaccount:other:gpu-serials", serviceAccountGroups("other")],
    ["system:serviceaccount:gpu-serials:default", serviceAccountGroups("gpu-serials")],
    ["system:serviceaccount:gpu-serials:gpu-serials-debug", serviceAccountGroups("gpu-serials")],
    ["system:node:gpu-node-1", ["system:nodes", "system:authenticated"]],
  ])("leaves %s alone, whatever the command", (username, groups) => {
    for (const exec of [
      { command: ["/bin/sh", "-c", "nvidia-smi -r"] },
      { command: ["nvidia-smi", "--gpu-reset", "-i", "0"] },
      { command: ["bash"], stdin: true, tty: true },
      { command: null },
      { command: xmlQueryArgv },
    ]) {
      expect(decide(policy, execActivation(username, exec, groups))).toEqual({ _tag: "NotMatched" })
    }
  })

  it("matches the ServiceAccount the Deployment runs as, by namespace and name", () => {
    const [, , namespace, name] = service.username.split(":")
    const matches = (username: string) =>
      policy.matchConditions.every((condition) =>
        holds(condition.expression, execActivation(username, { command: xmlQueryArgv })),
      )
    expect(matches(service.username)).toBe(true)
    expect(matches(`system:serviceaccount:${namespace}-staging:${name}`)).toBe(false)
    expect(matches(`system:serviceaccount:${namespace}:${name}-staging`)).toBe(false)
  })

  it("refuses with reason Forbidden, a 403 the service reports as exec-forbidden", () => {
    for (const validation of policy.validations) {
      expect(validation.reason, validation.expression).toBe("Forbidden")
      expect(validation.message?.trim(), validation.expression).not.toBe("")
    }
    const refused = new KubeApiError({
      operation: "exec",
      kind: kindOfStatus(403),
      status: 403,
      detail: `pods "nvidia-device-plugin-daemonset-x7k2p" is forbidden: ValidatingAdmissionPolicy '${policyManifest.metadata.name}' denied request`,
    })
    expect(failureOfExec(refused)).toMatchObject({ kind: "exec-forbidden", transient: false })
  })
})

describe("the exec-policy component with the device-plugin chart's pods (standalone-device-plugin)", () => {
  const manifests = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/base
components:
  - {root}/deploy/components/standalone-device-plugin
  - {root}/deploy/components/exec-policy
`)
  const policy = onlyOne(manifests, "ValidatingAdmissionPolicy").spec as PolicySpec
  const service = serviceAccountOf(manifests)

  it("still matches the service's account and lets it run its queries", () => {
    for (const argv of [xmlQueryArgv, csvQueryArgv]) {
      const activation = execActivation(service.username, { command: argv }, serviceAccountGroups(service.namespace))
      expect(
        decide(policy, { ...activation, request: { ...activation.request, namespace: "nvidia-device-plugin" } }),
      ).toEqual({
        _tag: "Allowed",
      })
    }
  })
})

/** DRA mode's argv, as the receiver builds it: nvidia-smi by path with the driver's NVML preloaded through `env`. */
const draLibrary = draDefaults.nvidiaMlLibrary
const draNvidiaSmi = draDefaults.nvidiaSmiPath
const draArgv = (argv: ReadonlyArray<string>, library: string = draLibrary, nvidiaSmi: string = draNvidiaSmi) =>
  execArgvFor({ path: nvidiaSmi, mlLibrary: library }, argv)

describe("the exec-policy component with the dra component: nvidia-smi of the DRA driver's root, through env", () => {
  const manifests = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/base
components:
  - {root}/deploy/components/exec-policy
  - {root}/deploy/components/dra
`)
  const policy = onlyOne(manifests, "ValidatingAdmissionPolicy").spec as PolicySpec
  const service = serviceAccountOf(manifests)
  const asService = (exec: Exec) => {
    const activation = execActivation(service.username, exec, serviceAccountGroups(service.namespace))
    return decide(policy, { ...activation, request: { ...activation.request, namespace: "nvidia-dra-driver-gpu" } })
  }

  it.each([
    ["the XML query", draArgv(xmlQueryArgv)],
    ["the CSV query", draArgv(csvQueryArgv)],
    ["the XML query with a RHEL-like library path", draArgv(xmlQueryArgv, "/driver-root/usr/lib64/libnvidia-ml.so.1")],
    [
      "the CSV query of the GPU Operator's host-installed driver",
      draArgv(csvQueryArgv, draLibrary, "/host/usr/bin/nvidia-smi"),
    ],
    ["the device-plugin mode's XML query", xmlQueryArgv],
    ["the device-plugin mode's CSV query", csvQueryArgv],
  ])("lets the service's account run %s", (_, argv) => {
    expect(asService({ command: argv })).toEqual({ _tag: "Allowed" })
  })

  it("uses the library and nvidia-smi paths the dra component configures", () => {
    const env = Object.fromEntries(
      (deploymentOf(manifests).spec.template.spec.containers[0]?.env ?? []).map((variable) => [
        variable.name,
        variable.value,
      ]),
    )
    expect([env.NVIDIA_ML_LIBRARY, env.NVIDIA_SMI_PATH]).toEqual([draLibrary, draNvidiaSmi])
  })

  it.each<[string, Exec, keyof typeof refusal]>([
    ["a shell", { command: ["/bin/bash", "-c", `LD_PRELOAD=${draLibrary} ${draNvidiaSmi} -q -x`] }, "program"],
    ["a shell run by env", { command: ["env", `LD_PRELOAD=${draLibrary}`, "/bin/sh", "-c", "nvidia-smi"] }, "program"],
    [
      "env with another variable",
      { command: ["env", "LD_LIBRARY_PATH=/driver-root/usr/lib64", draNvidiaSmi, "-q", "-x"] },
      "program",
    ],
    [
      "env with a second variable",
      { command: ["env", `LD_PRELOAD=${draLibrary}`, "PATH=/tmp", draNvidiaSmi, "-q", "-x"] },
      "program",
    ],
    ["env -i", { command: ["env", "-i", `LD_PRELOAD=${draLibrary}`, draNvidiaSmi, "-q", "-x"] }, "program"],
    ["env without a program", { command: ["env", `LD_PRELOAD=${draLibrary}`] }, "program"],
    ["env alone", { command: ["env"] }, "program"],
    ["another library preloaded", { command: draArgv(xmlQueryArgv, "/tmp/evil.so") }, "program"],
    [
      "a second library after the driver's",
      { command: draArgv(xmlQueryArgv, `${draLibrary}:/tmp/libnvidia-ml.so.1`) },
      "program",
    ],
    ["a relative library path", { command: draArgv(xmlQueryArgv, "libnvidia-ml.so.1") }, "program"],
    ["a library path with ..", { command: draArgv(xmlQueryArgv, "/driver-root/../tmp/libnvidia-ml.so.1") }, "program"],
    [
      "an nvidia-smi path with ..",
      { command: draArgv(xmlQueryArgv, draLibrary, "/driver-root/usr/bin/../../tmp/nvidia-smi") },
      "program",
    ],
    ["a relative nvidia-smi path", { command: draArgv(xmlQueryArgv, draLibrary, "nvidia-smi") }, "program"],
    [
      "another program",
      { command: draArgv(xmlQueryArgv, draLibrary, "/driver-root/usr/bin/nvidia-debugdump") },
      "program",
    ],
    ["an extra argument", { command: [...draArgv(xmlQueryArgv), "extra"] }, "arguments"],
    ["a GPU reset", { command: ["env", `LD_PRELOAD=${draLibrary}`, draNvidiaSmi, "-r"] }, "arguments"],
    ["a CSV query writing a file", { command: [...draArgv(csvQueryArgv), "-f", "/tmp/x"] }, "arguments"],
    [
      "env's form with the device-plugin mode's argument count",
      { command: ["env", `LD_PRELOAD=${draLibrary}`, draNvidiaSmi] },
      "arguments",
    ],
    ["stdin", { command: draArgv(xmlQueryArgv), stdin: true }, "stdin"],
    ["a TTY", { command: draArgv(csvQueryArgv), tty: true }, "tty"],
  ])("refuses the service's account %s, with that check's message", (_, exec, check) => {
    const decision = asService(exec)
    expect(decision._tag).toBe("Denied")
    if (decision._tag !== "Denied") return
    expect(decision.message).toContain(refusal[check])
    expect(decision.reason).toBe("Forbidden")
  })

  it("widens nothing when dra is listed before exec-policy, as docs/dra.md warns: env's form is refused", () => {
    const reversed = kustomizeOverlay(`
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {root}/deploy/base
components:
  - {root}/deploy/components/dra
  - {root}/deploy/components/exec-policy
`)
    const early = onlyOne(reversed, "ValidatingAdmissionPolicy").spec as PolicySpec
    const activation = execActivation(
      service.username,
      { command: draArgv(xmlQueryArgv) },
      serviceAccountGroups(service.namespace),
    )
    expect(decide(early, activation)).toMatchObject({ _tag: "Denied" })
  })

  it("keeps env's form out of the exec-policy variant without the dra component", () => {
    const plain = onlyOne(kustomize("deploy/examples/exec-policy"), "ValidatingAdmissionPolicy").spec as PolicySpec
    const activation = execActivation(
      service.username,
      { command: draArgv(xmlQueryArgv) },
      serviceAccountGroups("gpu-serials"),
    )
    expect(decide(plain, activation)).toMatchObject({ _tag: "Denied" })
  })
})
