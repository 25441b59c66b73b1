/**
 * PNG fixtures made with photon (the same codec as the default Image adapter): solid and noisy RGBA images.
 */
import photon from "@silvia-odwyer/photon-node"

/** A `width` × `height` PNG; `noisy` fills it with pseudo-random pixels so it compresses badly. */
export const png = (width: number, height: number, options: { readonly noisy?: boolean } = {}): Buffer => {
  const raw = new Uint8Array(width * height * 4)
  let seed = 12345
  for (let i = 0; i < raw.length; i++) {
    if (options.noisy === true) {
      seed = (seed * 1103515245 + 12345) >>> 0
      raw[i] = i % 4 === 3 ? 255 : seed >>> 24
    } else raw[i] = i % 4 === 3 ? 255 : 180
  }
  const image = new photon.PhotonImage(raw, width, height)
  try {
    return Buffer.from(image.get_bytes())
  } finally {
    image.free()
  }
}

/** The dimensions of encoded image bytes, decoded with photon. */
export const dimensions = (bytes: Uint8Array): { readonly width: number; readonly height: number } => {
  const image = photon.PhotonImage.new_from_byteslice(bytes)
  try {
    return { width: image.get_width(), height: image.get_height() }
  } finally {
    image.free()
  }
}
