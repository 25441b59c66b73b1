/** One title on the shelf. `price` is in cents. */
export interface Book {
  readonly isbn: string
  readonly title: string
  readonly author: string
  readonly price: number
  stock: number
}
