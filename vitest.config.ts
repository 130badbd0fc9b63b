import { defineConfig } from "vitest/config"

/**
 * A line of Effect's default logger (`[12:00:00.000] INFO (#50): inventory loaded { … }`): effects run by
 * a test without a logger of their own. The service always installs its JSON logger and tests that
 * assert on logs capture them (test/log/CapturedLog.ts), so these lines are noise in the test output.
 */
const effectDefaultLogLine = /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) \(#\d+\)/

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    onConsoleLog: (log) => !effectDefaultLogLine.test(log),
  },
})
