import { Duration, Option, Result, Schema, SchemaTransformation } from "effect"
import { parseGoDuration } from "./GoDuration.ts"

/** A Go duration (`300ms`, `5s`, `1m30s`, `1.5h`; `0` is zero) as a Duration, none when it is not one. */
const goDuration = (text: string): Option.Option<Duration.Duration> => {
  const millis = parseGoDuration(text)
  return Result.isSuccess(millis) ? Option.some(Duration.millis(millis.success)) : Option.none()
}

const expectation = 'must be a positive duration such as "500ms", "5s" or "1m30s" (or milliseconds)'

const isPositive = (duration: Duration.Duration): boolean =>
  Number.isFinite(Duration.toMillis(duration)) && Duration.toMillis(duration) > 0

const GoDurationText = Schema.String.check(
  Schema.makeFilter((text: string) => Option.exists(goDuration(text.trim()), isPositive), {
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
            : Option.getOrElse(goDuration(input.trim()), () => Duration.zero),
        encode: (duration: Duration.Duration) => Duration.toMillis(duration),
      }),
    ),
  )
