import { describe, expect, it } from "vitest"
import { metricNamesOf } from "./PromqlMetricNames.ts"

describe("metricNamesOf", () => {
  it("finds the metrics of selectors, aggregations, joins and functions", () => {
    expect(
      metricNamesOf(
        `max by (UUID, Hostname) (max by (UUID) (DCGM_FI_DEV_GPU_TEMP{gpu!="1"}) * on(UUID) group_right(serial) gpu_serials_gpu_info{cluster=~"a|b"})`,
      ),
    ).toEqual(new Set(["DCGM_FI_DEV_GPU_TEMP", "gpu_serials_gpu_info"]))
    expect(
      metricNamesOf(
        `histogram_quantile(0.95, sum by (le) (rate(gpu_serials_exec_duration_seconds_bucket{job=~".+"}[5m] offset 1m)))`,
      ),
    ).toEqual(new Set(["gpu_serials_exec_duration_seconds_bucket"]))
    expect(metricNamesOf(`time() - max(job:last_reading:max) > bool 300 or vector(0)`)).toEqual(
      new Set(["job:last_reading:max"]),
    )
    expect(metricNamesOf(`sum(x) without (instance) / ignoring (pod) count(y) unless z`)).toEqual(
      new Set(["x", "y", "z"]),
    )
  })

  it("does not take label names or string contents for metrics", () => {
    expect(metricNamesOf(`up{job="gpu_serials_leader", instance=~"some_metric"}`)).toEqual(new Set(["up"]))
  })
})
