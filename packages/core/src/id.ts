/**
 * Time-ordered identifiers: 12 hex digits of (millis * 0x1000 + counter), then 14 random base62 characters.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

let lastMillis = 0
let counter = 0

/** Returns a 26-character ascending identifier; ids created later in the same process sort later. */
export const ascending = (): string => {
  const now = Date.now()
  if (now !== lastMillis) {
    lastMillis = now
    counter = 0
  }
  counter++
  const value = (BigInt(now) * 0x1000n + BigInt(counter)) & 0xffffffffffffn
  const time = value.toString(16).padStart(12, "0")
  const bytes = randomBytes(14)
  let random = ""
  for (const byte of bytes) random += ALPHABET[byte % 62]
  return time + random
}

/** Returns `prefix + "_" + ascending()`. */
export const create = (prefix: string): string => `${prefix}_${ascending()}`
