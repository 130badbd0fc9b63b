// Preloaded with `node --import`: appends the URL of every module the process loads to $MODULE_LOAD_RECORD.
import { appendFileSync } from "node:fs"
import { registerHooks } from "node:module"

const record = process.env.MODULE_LOAD_RECORD

if (record !== undefined) {
  registerHooks({
    load: (url, context, nextLoad) => {
      appendFileSync(record, `${url}\n`)
      return nextLoad(url, context)
    },
  })
}
