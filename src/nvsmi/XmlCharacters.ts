/**
 * The character classes of XML 1.0 (fifth edition) the scanner needs, over code points: what may start a
 * name, what may continue one, and which characters a character reference may name (XML 1.1 allows the C0
 * controls there, 1.0 does not).
 */
export const isNameStartChar = (c: number): boolean =>
  (c >= 0x61 && c <= 0x7a) ||
  (c >= 0x41 && c <= 0x5a) ||
  c === 0x5f ||
  c === 0x3a ||
  (c >= 0xc0 &&
    (c <= 0xd6 ||
      (c >= 0xd8 && c <= 0xf6) ||
      (c >= 0xf8 && c <= 0x2ff) ||
      (c >= 0x370 && c <= 0x37d) ||
      (c >= 0x37f && c <= 0x1fff) ||
      c === 0x200c ||
      c === 0x200d ||
      (c >= 0x2070 && c <= 0x218f) ||
      (c >= 0x2c00 && c <= 0x2fef) ||
      (c >= 0x3001 && c <= 0xd7ff) ||
      (c >= 0xf900 && c <= 0xfdcf) ||
      (c >= 0xfdf0 && c <= 0xfffd) ||
      (c >= 0x10000 && c <= 0xeffff)))

export const isNameChar = (c: number): boolean =>
  isNameStartChar(c) ||
  (c >= 0x30 && c <= 0x39) ||
  c === 0x2d ||
  c === 0x2e ||
  c === 0xb7 ||
  (c >= 0x300 && c <= 0x36f) ||
  (c >= 0x203f && c <= 0x2040)

/** Whether a character reference (`&#…;`) may name `c`. */
export const isReferableChar = (c: number, xml11: boolean): boolean =>
  (xml11 ? c >= 0x1 && c <= 0xd7ff : (c >= 0x20 && c <= 0xd7ff) || c === 0x9 || c === 0xa || c === 0xd) ||
  (c >= 0xe000 && c <= 0xfffd) ||
  (c >= 0x10000 && c <= 0x10ffff)

/** Whitespace as XML counts it. */
export const isXmlSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09
