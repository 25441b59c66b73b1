import type { Book } from "./types.js"

// TODO: use the shop's locale instead of a hard-coded dollar sign
export const formatPrice = (cents: number): string => "$" + (cents / 100).toFixed(2)

export const windowLine = (book: Book): string => `${book.title} (${book.author}) ${formatPrice(book.price)}`
