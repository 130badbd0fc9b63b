import { expect } from "vitest"

/** `expect.poll` with the patience a page needs: its fetches, its 200 ms search debounce, its 5 s refresh. */
export const eventually = <T>(value: () => T | Promise<T>) => expect.poll(value, { timeout: 20_000, interval: 100 })
