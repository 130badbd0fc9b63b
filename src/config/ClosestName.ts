/** Edit distance counting insertions, deletions, substitutions and swaps of neighbours (`ie` → `ei`). */
const distance = (a: string, b: string): number => {
  const rows: Array<Array<number>> = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  const at = (i: number, j: number): number => rows[i]?.[j] ?? 0
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] ?? []
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1)
      row[j] = best
    }
  }
  return at(a.length, b.length)
}

/** The known name a mistyped one most likely meant, for "did you mean" hints; none when nothing is close. */
export const closestName = (typed: string, known: Iterable<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Math.max(1, Math.floor(typed.length / 3)) + 1
  for (const name of known) {
    const d = distance(typed.toLowerCase(), name.toLowerCase())
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return best
}

/** ` (did you mean "x"?)` or nothing. */
export const didYouMean = (typed: string, known: Iterable<string>): string => {
  const name = closestName(typed, known)
  return name === undefined ? "" : ` (did you mean ${JSON.stringify(name)}?)`
}
