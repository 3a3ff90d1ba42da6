// The byte- and text-level checks a record passes before JSON.parse: UTF-8 and nesting depth.
// Both chosen by measurement on the 1 KiB events of decode.bench.ts (2-core box shared with other
// work, median of 7, ns per event; JSON.parse of the same text ~2,100-2,300):
//   UTF-8                  ASCII only  one 'ü' in it
//   TextDecoder({fatal})   161-166   815-876
//   isUtf8 + toString      174-175   903-967
//   toString (lossy)       135-141   762-844
//   A tie within ~15%, so the one call that validates and decodes together wins. (A single non-ASCII
//   character makes V8 build a two-byte string: that, not the validation, is the 5x.)
//   Depth: a JS state machine over every char ~1,080 (70% of a parse); the same skipping strings
//   with indexOf ~570; counting '{' and '[' with indexOf ~110-130.
// So depth is bounded by the count first, and only text with more brackets than maxDepth pays for
// the exact scan. No second walk of the parsed value is needed.

// One decoder for every record: fatal, so a bad byte throws instead of becoming U+FFFD; and it
// drops a leading UTF-8 byte-order mark, which JSON.parse would otherwise refuse.
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The record's text, or undefined when the bytes are not UTF-8. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  // The TypeError of bad bytes is caught right here: no stack for it (capturing one costs more than
  // decoding a good record).
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
}

const QUOTE = 34 // "
const BACKSLASH = 92 // \
const OPEN_OBJECT = 123 // {
const OPEN_ARRAY = 91 // [
const CLOSE_OBJECT = 125 // }
const CLOSE_ARRAY = 93 // ]

/**
 * Whether JSON `text` nests no more than `maxDepth` containers (`{}` is depth 1, `{"a":[]}` 2).
 * Brackets inside strings do not count. On text that is not JSON the answer is about its brackets,
 * which is all the caller needs (JSON.parse judges the rest).
 */
export function withinDepth(text: string, maxDepth: number): boolean {
  // Depth can only exceed maxDepth if there are more than maxDepth opening brackets in the text.
  // indexOf is native and jumps between hits, so typical events cost a handful of calls.
  let opening = 0
  for (let i = text.indexOf('{'); i !== -1; i = text.indexOf('{', i + 1)) if (++opening > maxDepth) break
  if (opening <= maxDepth) {
    for (let i = text.indexOf('['); i !== -1; i = text.indexOf('[', i + 1)) if (++opening > maxDepth) break
    if (opening <= maxDepth) return true
  }
  return exactDepthWithin(text, maxDepth)
}

function exactDepthWithin(text: string, maxDepth: number): boolean {
  let depth = 0
  const length = text.length
  for (let i = 0; i < length; i++) {
    const char = text.charCodeAt(i)
    if (char === QUOTE) {
      // Jump to the closing quote: one not preceded by an odd run of backslashes.
      for (;;) {
        i = text.indexOf('"', i + 1)
        if (i === -1) return true
        let backslashes = 0
        while (text.charCodeAt(i - 1 - backslashes) === BACKSLASH) backslashes++
        if ((backslashes & 1) === 0) break
      }
    } else if (char === OPEN_OBJECT || char === OPEN_ARRAY) {
      if (++depth > maxDepth) return false
    } else if (char === CLOSE_OBJECT || char === CLOSE_ARRAY) {
      depth--
    }
  }
  return true
}
