/**
 * Content-type sniffing of `read`: image signatures, the binary heuristic, and the mime type a text file reports.
 *
 * @since 0.3.0
 */
import * as path from "node:path"
import * as mime from "mime-types"

/**
 * Extensions that are binary whatever the bytes say.
 *
 * @since 0.3.0
 * @category sniffing
 */
export const BINARY_EXTENSIONS = new Set(
  ".zip .tar .gz .exe .dll .so .class .jar .war .7z .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .bin .dat .obj .o .a .lib .wasm .pyc .pyo".split(
    " ",
  ),
)

/**
 * True iff `bytes` holds `prefix` at `at`.
 *
 * @since 0.3.0
 * @category sniffing
 */
export const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0): boolean =>
  prefix.every((value, index) => bytes[at + index] === value)

/**
 * The image mime of `bytes` by magic number, if any.
 *
 * @since 0.1.0
 * @category sniffing
 */
export const sniffImage = (bytes: Uint8Array): string | undefined => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"
  return undefined
}

/**
 * A control byte other than tab, newline, vertical tab, form feed and carriage return.
 *
 * @since 0.3.0
 * @category sniffing
 */
export const isControl = (byte: number): boolean => byte < 9 || (byte > 13 && byte < 32)

/**
 * True iff `resource` has a binary extension, or `bytes` hold a NUL or more than 30% control bytes.
 *
 * @since 0.1.0
 * @category sniffing
 */
export const binary = (resource: string, bytes: Uint8Array): boolean => {
  if (BINARY_EXTENSIONS.has(path.extname(resource).toLowerCase())) return true
  if (bytes.length === 0) return false
  let control = 0
  for (const byte of bytes) {
    if (byte === 0) return true
    if (isControl(byte)) control++
  }
  return control / bytes.length > 0.3
}

/**
 * Source extensions the IANA-based table gets wrong or lacks for text (`.ts` is MPEG transport stream there).
 *
 * @since 0.2.0
 * @category sniffing
 */
export const TEXT_MIMES: Readonly<Record<string, string>> = {
  ".ts": "text/typescript",
  ".mts": "text/typescript",
  ".cts": "text/typescript",
  ".tsx": "text/tsx",
  ".jsx": "text/jsx",
  ".mjs": "text/javascript",
  ".cjs": "text/javascript",
  ".vue": "text/x-vue",
  ".svelte": "text/x-svelte",
  ".rs": "text/x-rust",
  ".go": "text/x-go",
  ".kt": "text/x-kotlin",
  ".swift": "text/x-swift",
  ".toml": "application/toml",
  ".jsonc": "application/json",
  ".json5": "application/json5",
}

const TEXTUAL_APPLICATION =
  /^application\/(json|json5|javascript|ecmascript|xml|toml|yaml|x-yaml|sql|graphql|x-sh|x-httpd-php|x-tex|x-latex|x-perl|x-python|x-ruby|rtf)$|^application\/.*\+(json|xml|yaml)$/

/**
 * The mime type of a file that was read as UTF-8 text: the source table above, else the extension table when it
 * names a textual type, else `text/plain` (the content already passed the binary check, whatever the name says).
 *
 * @since 0.2.0
 * @category sniffing
 */
export const textMimeType = (file: string): string => {
  const known = TEXT_MIMES[path.extname(file).toLowerCase()]
  if (known !== undefined) return known
  const looked = mime.lookup(file)
  if (looked !== false && (looked.startsWith("text/") || TEXTUAL_APPLICATION.test(looked))) return looked
  return "text/plain"
}

/**
 * The mime type for a file name, by extension (text sources by `TEXT_MIMES`); `application/octet-stream` when unknown.
 *
 * @since 0.1.0
 * @category sniffing
 */
export const mimeType = (file: string): string =>
  TEXT_MIMES[path.extname(file).toLowerCase()] ?? (mime.lookup(file) || "application/octet-stream")
