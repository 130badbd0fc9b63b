import { podOf, type RecordValues } from "../domain/KnownGpuOfRecord.ts"
import type { PodRef } from "../domain/NodeObservation.ts"

/**
 * The values many GPUs of a view repeat, kept once: equal texts (a cluster's, a node's, a machine's, a
 * product's, a driver's name, an event's kind) as one string, equal record times as one Date, a pod as one
 * object. A record decoded from JSON brings its own copy of each, and a view of 100,000 GPUs would otherwise
 * hold one per GPU and per history entry. Bounded: past the bound each kind starts anew, so the names a
 * churning fleet no longer uses are let go; what was shared before stays shared.
 */
export class SharedValues implements RecordValues {
  private readonly texts = new Map<string, string>()
  private readonly times = new Map<string, Date>()
  private readonly pods = new Map<string, PodRef>()
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

  /** The one Date of an RFC 3339 time; never changed by its holders. */
  time(time: string): Date {
    const known = this.times.get(time)
    if (known !== undefined) return known
    if (this.times.size >= this.bound) this.times.clear()
    const date = new Date(time)
    this.times.set(time, date)
    return date
  }

  /** The one pod of a record's `source`. */
  pod(source: string): PodRef {
    const known = this.pods.get(source)
    if (known !== undefined) return known
    if (this.pods.size >= this.bound) this.pods.clear()
    const pod = podOf(source)
    const shared = { namespace: this.text(pod.namespace), name: this.text(pod.name) }
    this.pods.set(source, shared)
    return shared
  }

  clear(): void {
    this.texts.clear()
    this.times.clear()
    this.pods.clear()
  }

  /** How many values are kept, of every kind. */
  get size(): number {
    return this.texts.size + this.times.size + this.pods.size
  }
}
