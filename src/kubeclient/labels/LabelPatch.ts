/** A JSON merge patch of an object's `metadata.labels`: a value sets a label, `null` removes it. */
export type LabelPatch = Readonly<Record<string, string | null>>
