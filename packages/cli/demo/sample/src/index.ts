export { Inventory } from "./inventory.js"
export { formatPrice, windowLine } from "./format.js"
export type { Book } from "./types.js"
