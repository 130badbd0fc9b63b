/**
 * Memory an answer's body is gathered in: the chunks copied in as they arrive, the whole body read as one
 * view of it. It grows by doubling; `clear` keeps what it has grown to for the next body.
 */
export class BodyBuffer {
  private memory: Buffer
  private written = 0

  constructor(initialBytes = 0) {
    this.memory = Buffer.allocUnsafeSlow(initialBytes)
  }

  /** Bytes gathered so far. */
  get length(): number {
    return this.written
  }

  /** Bytes it holds room for. */
  get capacity(): number {
    return this.memory.length
  }

  /** Makes room for `bytes` in all (a Content-Length), so the body is copied once. */
  reserve(bytes: number): void {
    if (bytes > this.memory.length) this.resize(bytes)
  }

  append(chunk: Buffer): void {
    const needed = this.written + chunk.length
    if (needed > this.memory.length) this.resize(Math.max(needed, this.memory.length * 2, minimumBytes))
    chunk.copy(this.memory, this.written)
    this.written = needed
  }

  /** The body gathered: a view that the next body gathered here overwrites. */
  get bytes(): Buffer {
    return this.memory.subarray(0, this.written)
  }

  clear(): void {
    this.written = 0
  }

  private resize(bytes: number): void {
    const larger = Buffer.allocUnsafeSlow(bytes)
    this.memory.copy(larger, 0, 0, this.written)
    this.memory = larger
  }
}

/** The least a buffer grows to: one TLS record. */
const minimumBytes = 16 * 1024

export interface BodyBuffersOptions {
  /** Idle buffers kept for the next answers. */
  readonly kept: number
  /** A buffer grown past this is not kept: a rare huge answer does not stay resident. */
  readonly largestKeptBytes: number
  /** Idle buffers are let go once no answer took one for this long. */
  readonly idleMs: number
}

/**
 * The API client's body buffers, used again answer after answer. A body gathered by joining its chunks
 * (`Buffer.concat`) gets memory of its own: megabytes for a page of a list, outside V8's heap, held by a
 * Buffer that lives while the page is parsed, long enough to be promoted, so that it is freed only at the
 * next full collection. The pages of the first lists of a large fleet left tens of megabytes of such
 * buffers behind before one came (docs/pipeline-bench.md). Gathered here, each body is copied into a
 * buffer that the next answer uses again once this one is parsed, and what the lists hold outside the heap
 * is the few pages in flight at once. Buffers left idle are let go after `idleMs`, so a service between
 * lists keeps none.
 */
export class BodyBuffers {
  private readonly idle: Array<BodyBuffer> = []
  private readonly release: NodeJS.Timeout
  private readonly options: BodyBuffersOptions

  constructor(options: BodyBuffersOptions = defaultBodyBuffersOptions) {
    this.options = options
    this.release = setTimeout(() => {
      this.idle.length = 0
    }, options.idleMs)
    this.release.unref()
  }

  /** Buffers kept for the next answers. */
  get idleCount(): number {
    return this.idle.length
  }

  /** A buffer for one body, empty; hand it back with `give` once the body has been read out of it. */
  take(): BodyBuffer {
    return this.idle.pop() ?? new BodyBuffer()
  }

  /** Takes back a buffer whose body nothing reads any more. */
  give(buffer: BodyBuffer): void {
    buffer.clear()
    if (this.idle.length < this.options.kept && buffer.capacity <= this.options.largestKeptBytes) {
      this.idle.push(buffer)
    }
    this.release.refresh()
  }
}

/**
 * Four buffers: a list's next page streams in while the one before is parsed, and the pods and the nodes
 * are listed together. 8 MiB holds a 500-object page of objects of 16 KiB each (the simulated nodes' pages
 * are 1.5-2.5 MB).
 */
export const defaultBodyBuffersOptions: BodyBuffersOptions = {
  kept: 4,
  largestKeptBytes: 8 * 1024 * 1024,
  idleMs: 10_000,
}
