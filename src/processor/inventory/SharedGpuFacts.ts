import type { Gpu, GpuPlatform } from "../../domain/Gpu.ts"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * The facts many GPUs of a reading and of a fleet repeat, kept once: a product's name, a MIG mode, a PCI
 * slot's bus id, a driver's and CUDA's versions, a namespace, and a platform equal to one kept before (the
 * zero fabric GUID of every H100 board). A parser gives each GPU of each reading its own copy of each; the
 * inventory keeps its GPUs for good, so without this a fleet of 46,000 GPUs held tens of thousands of copies
 * of a dozen names. The UUID and serial are a GPU's own and stay as they are. Small and bounded: past
 * `bound` values of a kind it starts anew, so a fleet's rare values (a tray's own platform) do not pile
 * up; the common ones are kept again at their next use.
 */
export class SharedGpuFacts {
  private readonly texts = new Map<string, string>()
  private readonly platforms = new Map<string, GpuPlatform>()
  private readonly bound: number

  constructor(bound: number) {
    this.bound = bound
  }

  /** The one string equal to `text`. */
  text(text: string): string {
    const known = this.texts.get(text)
    if (known !== undefined) return known
    if (this.texts.size >= this.bound) this.texts.clear()
    this.texts.set(text, text)
    return text
  }

  /** The GPU as the inventory keeps it: without its health signals (its verdict holds them), repeated facts shared. */
  gpu(gpu: Gpu): Gpu {
    // One literal of every field: V8 sizes it for them all, where fields added one by one spill into a second array.
    return {
      index: gpu.index,
      uuid: gpu.uuid,
      ...(gpu.serial === undefined ? {} : { serial: gpu.serial }),
      ...(gpu.product === undefined ? {} : { product: this.text(gpu.product) }),
      ...(gpu.pciBusId === undefined ? {} : { pciBusId: this.text(gpu.pciBusId) }),
      ...(gpu.moduleId === undefined ? {} : { moduleId: gpu.moduleId }),
      ...(gpu.migMode === undefined ? {} : { migMode: this.text(gpu.migMode) }),
      ...(gpu.platform === undefined ? {} : { platform: this.platform(gpu.platform) }),
      ...(gpu.migDevices === undefined ? {} : { migDevices: gpu.migDevices }),
    }
  }

  /** How many values are kept, of every kind. */
  get size(): number {
    return this.texts.size + this.platforms.size
  }

  private platform(platform: GpuPlatform): GpuPlatform {
    // Equal means equal as JSON (same fields in the same order), which is how a parser builds them.
    const key = JSON.stringify(platform)
    const known = this.platforms.get(key)
    if (known !== undefined) return known
    const kept: Mutable<GpuPlatform> = {}
    for (const field of Object.keys(platform) as Array<keyof GpuPlatform>) {
      const value = platform[field]
      if (value !== undefined) kept[field] = this.text(value)
    }
    if (this.platforms.size >= this.bound) this.platforms.clear()
    const frozen = Object.freeze(kept)
    this.platforms.set(key, frozen)
    return frozen
  }
}
