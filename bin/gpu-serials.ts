#!/usr/bin/env node
import { enableCompileCache } from "node:module"

// V8 keeps the compiled code of the modules between runs (in the temporary folder), so a command starts sooner.
enableCompileCache()
const { runCli } = await import("../src/cli/RunCli.ts")
runCli(process.argv.slice(2))
