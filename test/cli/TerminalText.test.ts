import { describe, expect, it } from "vitest"
import { terminalText } from "../../src/cli/TerminalText.ts"

describe("terminalText", () => {
  it("shows every C0 control, DEL and every C1 control as a visible escape", () => {
    for (let code = 0; code <= 0x9f; code++) {
      if (code >= 0x20 && code < 0x7f) continue
      expect(terminalText(`a${String.fromCharCode(code)}b`)).toBe(`a\\x${code.toString(16).padStart(2, "0")}b`)
    }
  })

  it("escapes a whole colour sequence, line and paragraph separators and bidirectional overrides", () => {
    expect(terminalText("\u001b[31mred\u001b[0m")).toBe("\\x1b[31mred\\x1b[0m")
    expect(terminalText("a\u2028b\u2029c")).toBe("a\\u2028b\\u2029c")
    expect(terminalText("serial \u202e1234")).toBe("serial \\u202e1234")
  })

  it("keeps printable text as it is, accents, symbols and emoji included", () => {
    const printable = "NVIDIA H100 80GB HBM3 · Tésla ✓ 😀 GPU-aaaaaaaa-1111 [N/A] \\x1b"
    expect(terminalText(printable)).toBe(printable)
  })
})
