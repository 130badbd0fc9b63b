import { podOf, type RecordValues } from "../domain/KnownGpuOfRecord.ts"
import type { PodRef } from "../domain/NodeObservation.ts"

/**
 * The values many GPUs of a view repeat, kept once: equal texts (a cluster's, a node's, a machine's, a
 * product's, a driver's name, an event's kind) as one string, equal record times as one Date, a pod as one
 * object. A record decoded from JSON brings its own copy of each, and a view of 100,000 GPUs would otherwise
 * hold one per GPU and per history entry. Bounded: past its bound each kind starts anew, so the names a
 * churning fleet no longer uses are let go; what was shared before stays shared. Times are kept for the
 * recent records alone (a reading's GPUs arrive together, and each reading has a time of its own).
 */
export class SharedValues implements RecordValues {
  private readonly texts = new Map<string, string>()
  private readonly times = new Map<string, { readonly text: string; readonly date: Date }>()
  private readonly pods = new Map<string, PodRef>()
  private readonly bound: number
  private readonly timesBound: number

  constructor(bounds: { readonly names: number; readonly times: number }) {
    this.bound = bounds.names
    this.timesBound = bounds.times
  }

  /** The one string equal to `text`. */
  text(text: string): string {
    const known = this.texts.get(text)
    if (known !== undefined) return known
    if (this.texts.size >= this.bound) this.texts.clear()
    this.texts.set(text, text)
    return text
  }

  /** The one Date of a recent record's RFC 3339 time; never changed by its holders. */
  time(time: string): Date {
    return this.recentTime(time).date
  }

  /** The one string of a recent record's RFC 3339 time. */
  timeText(time: string): string {
    return this.recentTime(time).text
  }

  private recentTime(time: string): { readonly text: string; readonly date: Date } {
    const known = this.times.get(time)
    if (known !== undefined) return known
    if (this.times.size >= this.timesBound) this.times.clear()
    const kept = { text: time, date: new Date(time) }
    this.times.set(time, kept)
    return kept
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
