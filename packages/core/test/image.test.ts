import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck, Layer } from "effect"
import { Config, Image } from "../src/index.js"
import { dimensions, png } from "./support/png.js"

const document = (image: typeof Config.ImageAttachments.Type): Config.Entry => ({
  type: "document",
  info: { attachments: { image } },
})

const normalize = <A extends Image.Media>(
  media: A,
  entries: ReadonlyArray<Config.Entry> = [],
  layer: Layer.Layer<Image.Service, never, Config.Service> = Image.layer,
) =>
  Effect.flatMap(Image.Service, (image) => image.normalize("pic.png", media)).pipe(
    Effect.provide(layer.pipe(Layer.provide(Config.layerFromEntries(entries)))),
  )

const media = (bytes: Buffer) => ({ content: bytes.toString("base64"), mime: "image/png", name: "pic.png" })

describe("Image", () => {
  it.effect("returns media within limits unchanged (same object)", () =>
    Effect.gen(function* () {
      const input = media(png(8, 8))
      const output = yield* normalize(input)
      expect(output).toBe(input)
    }),
  )

  it.effect("fails DecodeError for bytes that are not an image", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(normalize(media(png(8, 8).subarray(0, 30))))
      expect(error._tag).toBe("Image.DecodeError")
      expect(error.message).toBe("Image could not be decoded: pic.png")
    }),
  )

  it.effect("fails SizeError when resizing is disabled", () =>
    Effect.gen(function* () {
      const bytes = png(16, 1)
      const error = yield* Effect.flip(normalize(media(bytes), [document({ auto_resize: false, max_width: 4 })]))
      const size = bytes.toString("base64").length
      expect(error.message).toBe(
        `Image pic.png is 16x1 with base64 size ${size}, exceeding configured limits 4x2000/5242880 bytes`,
      )
    }),
  )

  it.effect("resizes to the configured dimensions, keeping other fields", () =>
    Effect.gen(function* () {
      const output = yield* normalize(media(png(16, 8)), [document({ max_width: 4 })])
      expect(output.name).toBe("pic.png")
      expect(output.mime).toBe("image/png")
      expect(dimensions(Buffer.from(output.content, "base64"))).toEqual({ width: 4, height: 2 })
    }),
  )

  it.effect("falls back to JPEG and smaller sizes under a byte budget", () =>
    Effect.gen(function* () {
      const bytes = png(64, 64, { noisy: true })
      const output = yield* normalize(media(bytes), [document({ max_base64_bytes: 2000 })])
      expect(Buffer.byteLength(output.content)).toBeLessThanOrEqual(2000)
      expect(["image/png", "image/jpeg"]).toContain(output.mime)
      expect(dimensions(Buffer.from(output.content, "base64")).width).toBeLessThan(64)
    }),
  )

  it.effect("enforces max base64 bytes after resize attempts", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(normalize(media(png(4, 4)), [document({ max_base64_bytes: 1 })]))
      expect(error._tag).toBe("Image.SizeError")
      expect(error.message).toContain("/1 bytes")
      expect(error).toMatchObject({ width: 4, height: 4, maxWidth: 2000, maxHeight: 2000, maxBytes: 1 })
    }),
  )

  it.effect("merges attachments.image across documents, later keys winning", () =>
    Effect.sync(() => {
      const limits = Image.limits([
        document({ max_width: 10, max_height: 20 }),
        { type: "directory", path: "/x" },
        document({ max_width: 30, auto_resize: false }),
      ])
      expect(limits).toEqual({ autoResize: false, maxWidth: 30, maxHeight: 20, maxBase64Bytes: 5 * 1024 * 1024 })
      expect(Image.limits([])).toEqual(Image.DEFAULT_LIMITS)
    }),
  )

  it.effect("without an adapter, normalize fails ResizerUnavailableError", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(normalize(media(png(2, 2)), [], Image.layerWithoutAdapter))
      expect(error._tag).toBe("Image.ResizerUnavailableError")
      const failing = Image.layerWithAdapter(Effect.fail(new Image.ResizerUnavailableError()))
      const again = yield* Effect.flip(normalize(media(png(2, 2)), [], failing))
      expect(again._tag).toBe("Image.ResizerUnavailableError")
    }),
  )

  it.effect("an injected adapter is used and every bitmap is freed", () =>
    Effect.gen(function* () {
      let live = 0
      const bitmap = (width: number, height: number): Image.Bitmap => {
        live++
        return {
          width,
          height,
          resize: (w, h) => bitmap(w, h),
          png: () => new Uint8Array(width * 100),
          jpeg: () => new Uint8Array(10),
          free: () => void live--,
        }
      }
      const adapter: Image.Adapter = { decode: () => bitmap(40, 40) }
      const output = yield* normalize(
        media(png(1, 1)),
        [document({ max_width: 20, max_base64_bytes: 200 })],
        Image.layerWithAdapter(adapter),
      )
      // 20x20 → PNG of 2000 bytes is too big; JPEG of 10 bytes (16 base64 chars) fits.
      expect(output.mime).toBe("image/jpeg")
      expect(live).toBe(0)
    }),
  )

  it("candidate sizes: first scaled, then shrinking, distinct, at most 32", () => {
    expect(Image.candidateSizes(16, 1, { maxWidth: 4, maxHeight: 2000 })[0]).toEqual({ width: 4, height: 1 })
    FastCheck.assert(
      FastCheck.property(
        FastCheck.integer({ min: 1, max: 10000 }),
        FastCheck.integer({ min: 1, max: 10000 }),
        FastCheck.integer({ min: 1, max: 3000 }),
        FastCheck.integer({ min: 1, max: 3000 }),
        (width, height, maxWidth, maxHeight) => {
          const sizes = Image.candidateSizes(width, height, { maxWidth, maxHeight })
          const keys = new Set(sizes.map((size) => `${size.width}x${size.height}`))
          return (
            sizes.length >= 1 &&
            sizes.length <= 32 &&
            keys.size === sizes.length &&
            sizes.every(
              (size, i) => i === 0 || (size.width <= sizes[i - 1]!.width && size.height <= sizes[i - 1]!.height),
            ) &&
            sizes.every((size) => size.width >= 1 && size.height >= 1)
          )
        },
      ),
    )
  })
})
