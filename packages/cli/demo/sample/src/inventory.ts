import type { Book } from "./types.js"

/** Books in stock, keyed by ISBN. */
export class Inventory {
    private readonly books = new Map<string, Book>()

    add(book: Book): void {
        this.books.set(book.isbn, { ...book })
    }

    // TODO: reject negative quantities
    restock(isbn: string, quantity: number): void {
        const book = this.books.get(isbn)
        if (book === undefined) throw new Error(`Unknown ISBN ${isbn}`)
        book.stock += quantity
    }

    /** The shelf value in cents. */
    totalValue(): number {
        let total = 0
        for (const book of this.books.values()) total += book.price * book.stock
        return total
    }

    list(): ReadonlyArray<Book> {
        return [...this.books.values()]
    }
}
