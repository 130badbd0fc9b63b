const excerptLimit = 120
const scanLimit = excerptLimit * 8
const terminalEscape = /\p{Cc}\[[0-9;?]*[ -/]*[@-~]/gu
const controlCharacters = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]+/gu

/**
 * A short, single-line, printable excerpt of nvidia-smi output (at most 120 characters), safe to put in an
 * error, a log line or a metric-free message: the raw payload never leaves the parser.
 */
export const outputExcerpt = (output: string): string => {
  const line = output
    .slice(0, scanLimit)
    .replace(terminalEscape, " ")
    .replace(controlCharacters, " ")
    .replace(/\s+/g, " ")
    .trim()
  const characters = Array.from(line)
  return characters.length <= excerptLimit ? line : `${characters.slice(0, excerptLimit - 1).join("")}…`
}
