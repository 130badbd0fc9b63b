import { Duration, Option, Schema, SchemaTransformation } from "effect"

const unitMillis: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
}

const goDurationShape = /^(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/
const goDurationPart = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g

/** Go `time.ParseDuration` syntax without a sign (`300ms`, `5s`, `1m30s`, `1.5h`); `0` is zero. */
export const parseGoDuration = (text: string): Option.Option<Duration.Duration> => {
  if (text === "0") return Option.some(Duration.zero)
  if (!goDurationShape.test(text)) return Option.none()
  let millis = 0
  for (const [, amount, unit] of text.matchAll(goDurationPart)) {
    millis += Number(amount) * (unitMillis[unit ?? ""] ?? 0)
  }
  return Option.some(Duration.millis(millis))
}

const expectation = 'must be a positive duration such as "500ms", "5s" or "1m30s" (or milliseconds)'

const isPositive = (duration: Duration.Duration): boolean =>
  Number.isFinite(Duration.toMillis(duration)) && Duration.toMillis(duration) > 0

const GoDurationText = Schema.String.check(
  Schema.makeFilter((text: string) => Option.exists(parseGoDuration(text.trim()), isPositive), {
    message: expectation,
  }),
)

const Milliseconds = Schema.Number.check(
  Schema.makeFilter((millis: number) => Number.isFinite(millis) && millis > 0, { message: expectation }),
)

/**
 * A positive duration in a config section: a Go duration string as the Go original and the
 * Collector write them (`"5s"`), or a number of milliseconds. Checked on the written value, so a
 * section reports every bad duration at once.
 */
export const DurationSetting = Schema.Union([GoDurationText, Milliseconds])
  .annotate({ message: expectation })
  .pipe(
    Schema.decodeTo(
      Schema.Duration,
      SchemaTransformation.transform<Duration.Duration, string | number>({
        decode: (input: string | number) =>
          typeof input === "number"
            ? Duration.millis(input)
            : Option.getOrElse(parseGoDuration(input.trim()), () => Duration.zero),
        encode: (duration: Duration.Duration) => Duration.toMillis(duration),
      }),
    ),
  )
