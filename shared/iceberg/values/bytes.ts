// Text forms of byte values: UUIDs (canonical 8-4-4-4-12), base64 (how JSON events carry binary)
// and hex (the spec's JSON single-value form of binary and fixed).

const hexDigits = '0123456789abcdef'

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  if (c >= 97 && c <= 102) return c - 87
  if (c >= 65 && c <= 70) return c - 55
  return -1
}

/** Canonical `f79c3e09-677c-4bbd-a479-3f349cb785e7` (any case) -> 16 big-endian bytes, or undefined. */
export function parseUuid(text: string): Uint8Array | undefined {
  if (text.length !== 36) return undefined
  const bytes = new Uint8Array(16)
  let at = 0
  for (let i = 0; i < 16; i++) {
    // Dashes sit before bytes 4, 6, 8 and 10.
    if (i === 4 || i === 6 || i === 8 || i === 10) {
      if (text.charCodeAt(at) !== 45) return undefined
      at++
    }
    const high = hexValue(text.charCodeAt(at))
    const low = hexValue(text.charCodeAt(at + 1))
    if (high < 0 || low < 0) return undefined
    bytes[i] = (high << 4) | low
    at += 2
  }
  return bytes
}

/** 16 bytes -> lowercase canonical UUID text. */
export function formatUuid(bytes: Uint8Array): string {
  const hex = encodeHex(bytes)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

export function encodeHex(bytes: Uint8Array): string {
  let text = ''
  for (const byte of bytes) text += hexDigits[byte >> 4]! + hexDigits[byte & 15]!
  return text
}

/** Hex text of either case -> bytes, or undefined if malformed. */
export function decodeHex(text: string): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined
  const bytes = new Uint8Array(text.length / 2)
  for (let i = 0; i < bytes.length; i++) {
    const high = hexValue(text.charCodeAt(2 * i))
    const low = hexValue(text.charCodeAt(2 * i + 1))
    if (high < 0 || low < 0) return undefined
    bytes[i] = (high << 4) | low
  }
  return bytes
}

// Standard alphabet, padding optional. Buffer's decoder alone is no check: it skips characters
// outside the alphabet and stops at the first '=', so "ab$c" and "ab==cd" would decode.
const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/

/** Base64 (RFC 4648 standard alphabet, padded or not) -> bytes, or undefined if malformed. */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (!base64Pattern.test(text)) return undefined
  const padded = text.charCodeAt(text.length - 1) === 61
  if (padded ? text.length % 4 !== 0 : text.length % 4 === 1) return undefined
  const buffer = Buffer.from(text, 'base64')
  // A plain Uint8Array (values are compared and stored as such, not as Buffer). Small buffers live
  // in Buffer's shared 8 KiB pool: copy those, so a value kept in a partition tuple does not pin it.
  if (buffer.byteLength === buffer.buffer.byteLength) {
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  }
  return new Uint8Array(buffer)
}

export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}
