/**
 * A deterministic pseudo-random stream (sfc32 seeded by a cyrb128 hash): the same seed always gives the
 * same cluster. `fork` derives an independent stream per purpose so adding draws in one place does not
 * shift every other generated value.
 */
export class SeededRandom {
  private a: number
  private b: number
  private c: number
  private d: number
  private readonly seed: string

  constructor(seed: string | number) {
    this.seed = String(seed)
    const [a, b, c, d] = cyrb128(this.seed)
    this.a = a
    this.b = b
    this.c = c
    this.d = d
    for (let index = 0; index < 12; index++) this.next()
  }

  fork(purpose: string): SeededRandom {
    return new SeededRandom(`${this.seed}/${purpose}`)
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.a |= 0
    this.b |= 0
    this.c |= 0
    this.d |= 0
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return (t >>> 0) / 4294967296
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance(probability: number): boolean {
    return probability > 0 && this.next() < probability
  }

  pick<T>(items: ReadonlyArray<T>): T {
    const item = items[Math.floor(this.next() * items.length)]
    if (item === undefined) throw new RangeError("cannot pick from an empty list")
    return item
  }

  /** Picks a key with probability proportional to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = (Object.entries(weights) as Array<[K, number]>).filter(([, weight]) => weight > 0)
    const total = entries.reduce((sum, [, weight]) => sum + weight, 0)
    let draw = this.next() * total
    for (const [key, weight] of entries) {
      draw -= weight
      if (draw < 0) return key
    }
    const last = entries[entries.length - 1]
    if (last === undefined) throw new RangeError("no positive weight to pick from")
    return last[0]
  }

  shuffle<T>(items: ReadonlyArray<T>): T[] {
    const result = [...items]
    for (let index = result.length - 1; index > 0; index--) {
      const other = Math.floor(this.next() * (index + 1))
      const swap = result[index] as T
      result[index] = result[other] as T
      result[other] = swap
    }
    return result
  }

  /** Lower-case hexadecimal digits. */
  hex(length: number): string {
    let text = ""
    for (let index = 0; index < length; index++) text += "0123456789abcdef"[Math.floor(this.next() * 16)]
    return text
  }

  digits(length: number): string {
    let text = ""
    for (let index = 0; index < length; index++) text += String(Math.floor(this.next() * 10))
    return text
  }

  /** Characters from an alphabet, e.g. the consonant-digit set Kubernetes uses for generated names. */
  chars(alphabet: string, length: number): string {
    let text = ""
    for (let index = 0; index < length; index++) text += alphabet[Math.floor(this.next() * alphabet.length)]
    return text
  }

  /** RFC 4122 shaped identifier (version 4 bits set), as Kubernetes uids are. */
  uuid(): string {
    const hex = this.hex(32)
    const variant = "89ab"[Math.floor(this.next() * 4)]
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
  }

  /** How many events of a Poisson process with this mean happen in one draw (Knuth's method, for small means). */
  poisson(mean: number): number {
    if (mean <= 0) return 0
    const limit = Math.exp(-mean)
    let count = 0
    let product = this.next()
    while (product > limit) {
      count++
      product *= this.next()
    }
    return count
  }

  /** Standard normal draw (Box-Muller). */
  normal(): number {
    const u = Math.max(this.next(), Number.EPSILON)
    const v = this.next()
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
  }
}

const cyrb128 = (text: string): [number, number, number, number] => {
  let h1 = 1779033703
  let h2 = 3144134277
  let h3 = 1013904242
  let h4 = 2773480762
  for (let index = 0; index < text.length; index++) {
    const k = text.charCodeAt(index)
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067)
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233)
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213)
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179)
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067)
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233)
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213)
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179)
  h1 ^= h2 ^ h3 ^ h4
  h2 ^= h1
  h3 ^= h1
  h4 ^= h1
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0]
}
