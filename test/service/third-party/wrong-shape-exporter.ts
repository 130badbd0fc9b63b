// A module that names itself an exporter but does not have the factory's shape.
export const factory = {
  kind: "receiver",
  type: 42,
  validate: "everything is fine",
}
