// The load of the scrape bench, in processes of their own so their work costs the server nothing:
// `scrape` runs `concurrency` scrapers of /metrics in a loop; `probe` asks /healthz every 50 ms (a process
// apart, so the scrapers' reading does not delay its answers). For `seconds`; prints one JSON line.
const [role = "probe", base = "", concurrencyText = "20", secondsText = "10"] = process.argv.slice(2)
const until = Date.now() + Number(secondsText) * 1000

if (role === "scrape") {
  let scrapes = 0
  let bytes = 0
  const scraper = async (): Promise<void> => {
    while (Date.now() < until) {
      const body = await (await fetch(`${base}/metrics`)).arrayBuffer()
      bytes += body.byteLength
      scrapes += 1
    }
  }
  await Promise.all(Array.from({ length: Number(concurrencyText) }, scraper))
  process.stdout.write(`${JSON.stringify({ scrapes, bytes })}\n`)
} else {
  const latencies: Array<number> = []
  while (Date.now() < until) {
    const start = performance.now()
    const answer = await fetch(`${base}/healthz`)
    await answer.text()
    latencies.push(performance.now() - start)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  process.stdout.write(`${JSON.stringify({ latencies })}\n`)
}
