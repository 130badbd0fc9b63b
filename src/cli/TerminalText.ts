/**
 * Characters a terminal may act on instead of printing: the C0 controls (ESC starts colour, cursor and
 * title sequences), DEL, the C1 controls (U+009B is a one-character CSI), the Unicode line and paragraph
 * separators, and the bidirectional overrides that reorder what is shown.
 */
const actionable = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu

const escaped = (character: string): string => {
  const code = character.charCodeAt(0)
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`
}

/**
 * `text` as it may be written to a terminal: every character in `actionable` shown as a visible escape
 * (`\x1b`, `\u2028`), so a value from nvidia-smi, from NATS or from the command line cannot move the
 * cursor, recolour the screen or hide what follows. Everything else is kept as it is.
 */
export const terminalText = (text: string): string => text.replace(actionable, escaped)
