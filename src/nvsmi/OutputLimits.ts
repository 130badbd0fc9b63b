/**
 * Bounds on what one nvidia-smi output may hold, far above any real one (the deepest real `-q -x`
 * document nests 7 levels, a GPU takes under 500 elements, no element carries more than one attribute,
 * values are under 100 characters, a node has at most a few dozen GPUs), so that hostile or corrupt
 * output within the byte cap costs little memory and time and is refused as `malformed` as soon as it
 * crosses one.
 */
export const outputLimits = {
  /** Elements open at once, the root included. */
  maxDepth: 64,
  /**
   * Elements in one document. Millions of tiny elements cost time, and V8 then allocates the reader's
   * short-lived objects straight into the old generation, where they pile up until a full collection.
   */
  maxElements: 256 * 1024,
  /** Attributes on one element. */
  maxAttributes: 64,
  /** Characters of one value the reading keeps (a serial, a product name, a bus id). */
  maxValueLength: 1024,
  /**
   * Characters of one piece of the XML reader's own making: a text node, an attribute value, a comment, a
   * CDATA section, a processing instruction, a doctype, an entity reference. Real ones are a few hundred.
   */
  maxRunLength: 64 * 1024,
  /** GPUs (XML `gpu` elements or CSV rows) in one output. */
  maxGpus: 1024,
  /** Lines of a CSV output, with whatever precedes its header; real ones are a few hundred at most. */
  maxLines: 64 * 1024,
  /** Characters of one CSV line; a row of every `--query-gpu` field is a few kilobytes. */
  maxLineLength: 64 * 1024,
} as const
