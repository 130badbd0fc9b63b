const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

/** nvidia-smi's timestamp, C `asctime` style with a space-padded day: `Fri Aug  4 11:44:30 2023`. */
export const reportTimestamp = (date: Date): string => {
  const pad = (value: number) => String(value).padStart(2, "0")
  return `${days[date.getUTCDay()]} ${months[date.getUTCMonth()]} ${String(date.getUTCDate()).padStart(2, " ")} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} ${date.getUTCFullYear()}`
}

/** The `timestamp` of `--query-gpu`: `2026/07/14 09:00:27.792`. */
export const queryTimestamp = (date: Date): string => {
  const pad = (value: number, width = 2) => String(value).padStart(width, "0")
  return `${date.getUTCFullYear()}/${pad(date.getUTCMonth() + 1)}/${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${pad(date.getUTCMilliseconds(), 3)}`
}
