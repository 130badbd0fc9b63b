/** How a process's output is laid out in memory: fixed-size blocks with spare bytes in front of each. */
export interface OutputLayout {
  readonly blockBytes: number
  /** Bytes reserved before each block's payload, for a transport to put its header in place. */
  readonly headroom: number
}

export const plainLayout: OutputLayout = { blockBytes: 64 * 1024, headroom: 0 }

/**
 * The stdout or stderr of a process, written in blocks sized for the transport, so a large report is
 * copied once into its frames instead of being joined into one string and cut up again.
 */
export class ProcessOutput {
  private readonly layout: OutputLayout
  private readonly filled: Buffer[] = []
  private current: Buffer
  private offset: number
  private total = 0

  constructor(layout: OutputLayout = plainLayout) {
    this.layout = layout
    this.current = Buffer.allocUnsafe(layout.headroom + layout.blockBytes)
    this.offset = layout.headroom
  }

  static of(text: string | Buffer, layout: OutputLayout = plainLayout): ProcessOutput {
    const output = new ProcessOutput(layout)
    output.write(text)
    return output
  }

  get byteLength(): number {
    return this.total
  }

  write(data: string | Buffer): void {
    if (typeof data === "string") {
      const length = Buffer.byteLength(data, "utf8")
      if (length <= this.current.length - this.offset) {
        this.current.write(data, this.offset, "utf8")
        this.offset += length
        this.total += length
        return
      }
      this.writeBytes(Buffer.from(data, "utf8"))
      return
    }
    this.writeBytes(data)
  }

  /** Keeps only the first `byteLength` bytes, as a process killed mid-write leaves them. */
  truncate(byteLength: number): ProcessOutput {
    const copy = new ProcessOutput(this.layout)
    copy.write(this.toBuffer().subarray(0, Math.max(0, Math.min(byteLength, this.total))))
    return copy
  }

  /** The blocks, each including its headroom bytes at the front. */
  blocks(): Buffer[] {
    const blocks = [...this.filled]
    if (this.offset > this.layout.headroom) blocks.push(this.current.subarray(0, this.offset))
    return blocks
  }

  toBuffer(): Buffer {
    return Buffer.concat(
      this.blocks().map((block) => block.subarray(this.layout.headroom)),
      this.total,
    )
  }

  toString(): string {
    return this.toBuffer().toString("utf8")
  }

  private writeBytes(bytes: Buffer): void {
    let position = 0
    while (position < bytes.length) {
      if (this.offset === this.current.length) this.nextBlock()
      const copied = bytes.copy(this.current, this.offset, position)
      this.offset += copied
      position += copied
    }
    this.total += bytes.length
  }

  private nextBlock(): void {
    this.filled.push(this.current)
    this.current = Buffer.allocUnsafe(this.layout.headroom + this.layout.blockBytes)
    this.offset = this.layout.headroom
  }
}
