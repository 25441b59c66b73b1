/**
 * Image normalisation for `read`: keeps an image within the configured `attachments.image` limits, shrinking and
 * re-encoding it when allowed. The codec is a pluggable adapter; the default one uses photon (WASM). Without an
 * adapter `normalize` fails with `ResizerUnavailableError` and callers keep the original media.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Config from "../place/config.js"

/**
 * No codec is available.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResizerUnavailableError extends Schema.TaggedError<ResizerUnavailableError>()(
  "Image.ResizerUnavailableError",
  {},
) {}

/**
 * The bytes are not a decodable image.
 *
 * @since 0.1.0
 * @category errors
 */
export class DecodeError extends Schema.TaggedError<DecodeError>()("Image.DecodeError", {
  resource: Schema.String,
}) {
  override get message(): string {
    return `Image could not be decoded: ${this.resource}`
  }
}

/**
 * The image exceeds the limits and could not (or may not) be shrunk to fit. Dimensions are the original ones.
 *
 * @since 0.1.0
 * @category errors
 */
export class SizeError extends Schema.TaggedError<SizeError>()("Image.SizeError", {
  resource: Schema.String,
  width: Schema.Number,
  height: Schema.Number,
  bytes: Schema.Number,
  maxWidth: Schema.Number,
  maxHeight: Schema.Number,
  maxBytes: Schema.Number,
}) {
  override get message(): string {
    return `Image ${this.resource} is ${this.width}x${this.height} with base64 size ${this.bytes}, exceeding configured limits ${this.maxWidth}x${this.maxHeight}/${this.maxBytes} bytes`
  }
}

/**
 * The failures of `normalize`.
 *
 * @since 0.1.0
 * @category errors
 */
export type Error = ResizerUnavailableError | DecodeError | SizeError

/**
 * A decoded image held by an adapter. `free` releases it; every method may be called until then.
 *
 * @since 0.1.0
 * @category models
 */
export interface Bitmap {
  readonly width: number
  readonly height: number
  /** A new bitmap of exactly `width` × `height`, resampled with Lanczos3. */
  readonly resize: (width: number, height: number) => Bitmap
  readonly png: () => Uint8Array
  readonly jpeg: (quality: number) => Uint8Array
  readonly free: () => void
}

/**
 * An image codec. `decode` throws when the bytes are not an image.
 *
 * @since 0.1.0
 * @category models
 */
export interface Adapter {
  readonly decode: (bytes: Uint8Array) => Bitmap
}

/**
 * Effective limits (from `attachments.image`, merged over every config document).
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  readonly autoResize: boolean
  readonly maxWidth: number
  readonly maxHeight: number
  readonly maxBase64Bytes: number
}

/**
 * Default limits.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_LIMITS: Limits = {
  autoResize: true,
  maxWidth: 2000,
  maxHeight: 2000,
  maxBase64Bytes: 5 * 1024 * 1024,
}

/**
 * JPEG qualities tried after PNG, in order.
 *
 * @since 0.1.0
 * @category constants
 */
export const JPEG_QUALITIES = [80, 85, 70, 55, 40] as const

/**
 * Base64 media: `content` is base64 and `mime` names its type.
 *
 * @since 0.1.0
 * @category models
 */
export interface Media {
  readonly content: string
  readonly mime: string
}

/**
 * The Image operations.
 *
 * @since 0.1.0
 * @category models
 */
export interface Interface {
  /** Returns `media` unchanged when it fits, else a smaller re-encoding (new `content` and `mime`). */
  readonly normalize: <A extends Media>(resource: string, media: A) => Effect.Effect<A, Error>
}

/**
 * The Image service (Location-scoped: limits come from the Location's config).
 *
 * @since 0.1.0
 * @category tags
 */
export class Service extends Context.Tag("@toolgate/v2/Image")<Service, Interface>() {}

/**
 * Merges `attachments.image` of every document, later keys winning, over the defaults.
 *
 * @since 0.1.0
 * @category utilities
 */
export const limits = (entries: ReadonlyArray<Config.Entry>): Limits => {
  const image: {
    -readonly [K in keyof typeof Config.ImageAttachments.Type]?: (typeof Config.ImageAttachments.Type)[K]
  } = {}
  for (const document of Config.documents(entries)) Object.assign(image, document.info.attachments?.image ?? {})
  return {
    autoResize: image.auto_resize ?? DEFAULT_LIMITS.autoResize,
    maxWidth: image.max_width ?? DEFAULT_LIMITS.maxWidth,
    maxHeight: image.max_height ?? DEFAULT_LIMITS.maxHeight,
    maxBase64Bytes: image.max_base64_bytes ?? DEFAULT_LIMITS.maxBase64Bytes,
  }
}

/**
 * Up to 32 distinct candidate sizes: the scaled size, then repeatedly three quarters per side (minimum 1).
 *
 * @since 0.1.0
 * @category utilities
 * @internal
 */
export const candidateSizes = (
  width: number,
  height: number,
  limit: Pick<Limits, "maxWidth" | "maxHeight">,
): ReadonlyArray<{ readonly width: number; readonly height: number }> => {
  const scale = Math.min(1, limit.maxWidth / width, limit.maxHeight / height)
  let current = { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) }
  const sizes = [current]
  for (let i = 1; i < 32; i++) {
    current = {
      width: current.width === 1 ? 1 : Math.max(1, Math.floor(current.width * 0.75)),
      height: current.height === 1 ? 1 : Math.max(1, Math.floor(current.height * 0.75)),
    }
    if (!sizes.some((size) => size.width === current.width && size.height === current.height)) sizes.push(current)
  }
  return sizes
}

const base64Bytes = (content: string): number => Buffer.byteLength(content, "utf8")

/**
 * The normalisation algorithm on a given adapter and limits.
 *
 * @since 0.1.0
 * @category utilities
 */
export const normalizeWith = <A extends Media>(
  adapter: Adapter,
  limit: Limits,
  resource: string,
  media: A,
): Effect.Effect<A, DecodeError | SizeError> =>
  Effect.acquireUseRelease(
    Effect.try({
      try: () => adapter.decode(Buffer.from(media.content, "base64")),
      catch: () => new DecodeError({ resource }),
    }),
    (bitmap) =>
      Effect.suspend(() => {
        const { width, height } = bitmap
        const bytes = base64Bytes(media.content)
        if (width <= limit.maxWidth && height <= limit.maxHeight && bytes <= limit.maxBase64Bytes)
          return Effect.succeed(media)
        const tooLarge = new SizeError({
          resource,
          width,
          height,
          bytes,
          maxWidth: limit.maxWidth,
          maxHeight: limit.maxHeight,
          maxBytes: limit.maxBase64Bytes,
        })
        if (!limit.autoResize) return Effect.fail(tooLarge)
        for (const size of candidateSizes(width, height, limit)) {
          const resized = bitmap.resize(size.width, size.height)
          try {
            const encoders: ReadonlyArray<readonly [string, () => Uint8Array]> = [
              ["image/png", () => resized.png()],
              ...JPEG_QUALITIES.map((quality) => ["image/jpeg", () => resized.jpeg(quality)] as const),
            ]
            for (const [mime, encode] of encoders) {
              const content = Buffer.from(encode()).toString("base64")
              if (base64Bytes(content) <= limit.maxBase64Bytes) return Effect.succeed({ ...media, content, mime })
            }
          } finally {
            resized.free()
          }
        }
        return Effect.fail(tooLarge)
      }),
    (bitmap) => Effect.sync(() => bitmap.free()),
  )

/**
 * The default adapter on `@silvia-odwyer/photon-node`, loaded on first use; a load failure is `ResizerUnavailableError`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const photonAdapter: Effect.Effect<Adapter, ResizerUnavailableError> = Effect.tryPromise({
  try: () => import("@silvia-odwyer/photon-node"),
  catch: () => new ResizerUnavailableError(),
}).pipe(
  Effect.map((module) => {
    const photon = ((module as { default?: unknown }).default ?? module) as typeof import("@silvia-odwyer/photon-node")
    type Photon = InstanceType<typeof photon.PhotonImage>
    const wrap = (image: Photon): Bitmap => ({
      width: image.get_width(),
      height: image.get_height(),
      resize: (width, height) => wrap(photon.resize(image, width, height, photon.SamplingFilter.Lanczos3)),
      png: () => image.get_bytes(),
      jpeg: (quality) => image.get_bytes_jpeg(quality),
      free: () => image.free(),
    })
    return { decode: (bytes: Uint8Array) => wrap(photon.PhotonImage.new_from_byteslice(bytes)) } satisfies Adapter
  }),
)

/**
 * Builds the service from an adapter (or an effect loading one, cached after its first success).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (
  adapter: Adapter | Effect.Effect<Adapter, ResizerUnavailableError>,
): Effect.Effect<Interface, never, Config.Service> =>
  Effect.gen(function* () {
    const config = yield* Config.Service
    let loaded = Effect.isEffect(adapter) ? undefined : adapter
    const load = Effect.suspend(() =>
      loaded !== undefined || !Effect.isEffect(adapter)
        ? Effect.succeed(loaded ?? (adapter as Adapter))
        : Effect.tap(adapter, (codec) => Effect.sync(() => (loaded = codec))),
    )
    const normalize = <A extends Media>(resource: string, media: A): Effect.Effect<A, Error> =>
      Effect.gen(function* () {
        const codec = yield* load
        const limit = limits(yield* config.entries())
        return yield* normalizeWith(codec, limit, resource, media)
      }).pipe(Effect.withSpan("Image.normalize"))
    return Service.of({ normalize })
  })

/**
 * The service on the given adapter.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithAdapter = (
  adapter: Adapter | Effect.Effect<Adapter, ResizerUnavailableError>,
): Layer.Layer<Service, never, Config.Service> => Layer.effect(Service, makeWith(adapter))

/**
 * The service on the default photon adapter.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Service, never, Config.Service> = layerWithAdapter(photonAdapter)

/**
 * A service with no codec: every `normalize` fails with `ResizerUnavailableError`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithoutAdapter: Layer.Layer<Service> = Layer.succeed(
  Service,
  Service.of({ normalize: () => Effect.fail(new ResizerUnavailableError()) }),
)
