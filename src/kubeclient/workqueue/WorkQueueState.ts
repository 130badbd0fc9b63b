/**
 * The bookkeeping of a work queue with client-go's contract, without waiting or time: a key is queued at
 * most once (duplicates collapse), a key being processed is never handed out again until `done`, and a
 * key added while it is processed is queued again by `done`. After `shutDown` nothing is added and
 * nothing more is handed out; keys still queued stay unprocessed. After `drain` nothing is added, but
 * what is queued is still handed out, until the queue is `drained`.
 */
export class WorkQueueState<K> {
  /** Keys waiting to be handed out, in the order they were added. */
  private readonly queue: Array<K> = []
  private head = 0
  /** Keys that need processing: queued, or added again while processing. */
  private readonly dirty = new Set<K>()
  /** Keys handed out and not yet `done`. */
  private readonly processing = new Set<K>()
  private stopped = false
  private draining = false

  /** Marks `key` as needing processing; `true` when it was queued now (and a waiting getter may take it). */
  add(key: K): boolean {
    if (this.stopped || this.draining || this.dirty.has(key)) {
      return false
    }
    this.dirty.add(key)
    if (this.processing.has(key)) {
      return false
    }
    this.queue.push(key)
    return true
  }

  /** Hands out the oldest queued key and marks it processing; `undefined` when none is queued or after shutdown. */
  get(): K | undefined {
    if (this.stopped || this.head === this.queue.length) {
      return undefined
    }
    const key = this.queue[this.head] as K
    this.head++
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head)
      this.head = 0
    }
    this.processing.add(key)
    this.dirty.delete(key)
    return key
  }

  /** Ends the processing of `key`; `true` when it was added meanwhile and is queued again now. */
  done(key: K): boolean {
    if (!this.processing.delete(key)) {
      return false
    }
    if (!this.dirty.has(key) || this.stopped) {
      return false
    }
    this.queue.push(key)
    return true
  }

  /** Keys waiting to be handed out. */
  get length(): number {
    return this.queue.length - this.head
  }

  /** Keys handed out and not yet done. */
  get processingCount(): number {
    return this.processing.size
  }

  isProcessing(key: K): boolean {
    return this.processing.has(key)
  }

  get isShutDown(): boolean {
    return this.stopped
  }

  /** Whether intake has stopped, by `shutDown` or `drain`. */
  get isClosed(): boolean {
    return this.stopped || this.draining
  }

  /** Whether the queue is draining and has nothing left to hand out or to wait for. */
  get drained(): boolean {
    return this.draining && this.length === 0 && this.processing.size === 0
  }

  /** Stops intake; what is queued, and what is added again while processing, is still handed out. */
  drain(): void {
    this.draining = true
  }

  shutDown(): void {
    this.stopped = true
  }
}
