/** The `toolgate-mcp` entry point: serves a Location over stdio. */
import { main } from "./server.js"

await main(process.argv.slice(2))
