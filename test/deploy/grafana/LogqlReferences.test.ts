import { describe, expect, it } from "vitest"
import { logqlReferencesOf } from "./LogqlReferences.ts"

describe("logqlReferencesOf", () => {
  it("reads selectors, line filters, label filters, templates and grouping", () => {
    const references = logqlReferencesOf(
      'sum by (k8s_node_name) (count_over_time({service_name="gpu-serials", k8s_cluster_name=~".+"} |= " moved from " != "x" | severity_text="WARN" and hw_parent!="" | line_format `{{.hw_id}} {{ .host_id | upper }} {{__line__}}` [5m]))',
    )
    expect(references.streamMatchers).toEqual([
      { name: "service_name", op: "=", value: "gpu-serials" },
      { name: "k8s_cluster_name", op: "=~", value: ".+" },
    ])
    expect(references.lineFilters).toEqual([
      { op: "|=", text: " moved from " },
      { op: "!=", text: "x" },
    ])
    expect(references.labelFilters).toEqual([
      { name: "severity_text", op: "=", value: "WARN" },
      { name: "hw_parent", op: "!=", value: "" },
    ])
    expect(references.namesRead).toEqual(new Set(["severity_text", "hw_parent", "hw_id", "host_id", "k8s_node_name"]))
  })

  it("tells the names a query creates from those it reads", () => {
    const references = logqlReferencesOf(
      'topk(1, max by (hw_id, event) (max_over_time({a="b"} | regexp ` (?P<event>added|moved) ` | label_format seen=`{{ __timestamp__ | unixEpoch }}`, node=k8s_node_name | unwrap seen [1h]))) by (hw_id) * 1000',
    )
    expect(references.namesCreated).toEqual(new Set(["event", "seen", "node"]))
    expect(references.namesRead).toEqual(new Set(["hw_id", "event", "k8s_node_name", "seen"]))
    expect(references.regexps).toEqual([" (?P<event>added|moved) "])
  })

  it("refuses what it cannot check", () => {
    expect(() => logqlReferencesOf('{a="b"} | json')).toThrow(/json stage/)
    expect(() => logqlReferencesOf('label_replace({a="b"}, "x", "$1", "a", "(.*)")')).toThrow(/unknown word/)
    expect(() => logqlReferencesOf('{a="b"} | hw_id')).toThrow(/expected op/)
  })
})
