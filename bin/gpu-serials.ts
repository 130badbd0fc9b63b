#!/usr/bin/env node
import { runCli } from "../src/cli/RunCli.ts"

runCli(process.argv.slice(2))
