/**
 * Time-ordered identifiers: 12 hex digits of (millis * 0x1000 + counter), then 14 random base62 characters.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

let lastMillis = 0
let counter = 0

// Random bytes are drawn from a pool refilled 4 KiB at a time: one `randomBytes` call per ~290 ids.
const POOL_SIZE = 4096
let pool = randomBytes(POOL_SIZE)
let offset = 0

const take = (count: number): Uint8Array => {
  if (offset + count > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE)
    offset = 0
  }
  const bytes = pool.subarray(offset, offset + count)
  offset += count
  return bytes
}

const TIME_MODULUS = 2 ** 48
const MILLIS_MODULUS = 2 ** 36

/**
 * The 12 hex digits of `(millis * 0x1000 + counter) mod 2^48`, computed exactly in doubles (no BigInt): the product
 * is taken of `millis mod 2^36`, so every intermediate value stays below 2^53.
 *
 * @since 0.2.0
 * @category utilities
 * @internal
 */
export const timePrefix = (millis: number, counter: number): string => {
  // Two 24-bit halves: a small integer prints in hex far faster than a 48-bit double does.
  const value = ((millis % MILLIS_MODULUS) * 0x1000 + counter) % TIME_MODULUS
  const high = Math.floor(value / 0x1000000)
  return high.toString(16).padStart(6, "0") + (value - high * 0x1000000).toString(16).padStart(6, "0")
}

/**
 * Returns a 26-character ascending identifier; ids created later in the same process sort later.
 *
 * @since 0.1.0
 * @category utilities
 */
export const ascending = (): string => {
  const now = Date.now()
  if (now !== lastMillis) {
    lastMillis = now
    counter = 0
  }
  counter++
  const time = timePrefix(now, counter)
  const bytes = take(14)
  let random = ""
  for (let i = 0; i < 14; i++) random += ALPHABET[bytes[i]! % 62]
  return time + random
}

/**
 * Returns `prefix + "_" + ascending()`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const create = (prefix: string): string => `${prefix}_${ascending()}`
