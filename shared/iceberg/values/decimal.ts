// Decimal values are their unscaled bigint (see types.ts). Parsing and printing decimal text is
// done here by hand: JavaScript has no decimal type, and going through a double would round.

/** 10^n as bigint for n in 0..76 (precision is at most 38; scale shifts stay within 2*38). */
const powersOfTen: bigint[] = []
for (let n = 0, p = 1n; n <= 76; n++, p *= 10n) powersOfTen.push(p)

export function pow10(n: number): bigint {
  return powersOfTen[n] ?? 10n ** BigInt(n)
}

/**
 * Decimal text (`-12.50`, `1e3`, `+.5`, `7.`) -> unscaled value at `scale`, or the reason it is not
 * acceptable: not a number, more digits after the point than `scale` holds (unless they are zeros;
 * Floe never rounds data), or more than `precision` digits in all.
 */
export function parseDecimalText(text: string, precision: number, scale: number): bigint | string {
  const length = text.length
  let i = 0
  let negative = false
  const first = text.charCodeAt(0)
  if (first === 45 || first === 43) {
    negative = first === 45
    i = 1
  }
  const integerStart = i
  while (i < length && isDigit(text.charCodeAt(i))) i++
  const integerDigits = text.slice(integerStart, i)
  let fractionDigits = ''
  if (text.charCodeAt(i) === 46) {
    const fractionStart = ++i
    while (i < length && isDigit(text.charCodeAt(i))) i++
    fractionDigits = text.slice(fractionStart, i)
  }
  if (integerDigits.length === 0 && fractionDigits.length === 0) return 'not a decimal number'
  let exponent = 0
  const e = text.charCodeAt(i)
  if (e === 101 || e === 69) {
    const exponentText = text.slice(i + 1)
    if (!/^[+-]?\d{1,6}$/.test(exponentText)) return 'not a decimal number'
    exponent = Number(exponentText)
    i = length
  }
  if (i !== length) return 'not a decimal number'

  let significant = integerDigits + fractionDigits
  let leading = 0
  while (leading < significant.length && significant.charCodeAt(leading) === 48) leading++
  significant = significant.slice(leading)
  if (significant.length === 0) return 0n
  // value = significant * 10^(exponent - fractionDigits.length); unscaled = value * 10^scale
  const shift = scale + exponent - fractionDigits.length
  if (shift < 0) {
    const dropped = significant.length + shift
    if (dropped < 0 || !/^0*$/.test(significant.slice(dropped))) {
      return `needs rounding to fit scale ${scale}`
    }
    significant = significant.slice(0, dropped)
    if (significant.length === 0) return 0n
  }
  const digitCount = significant.length + Math.max(shift, 0)
  // Leading zeros are gone, so the digit count is the precision the value needs.
  if (digitCount > precision) return `more than ${precision} digits (precision ${precision})`
  const unscaled = shift > 0 ? BigInt(significant) * pow10(shift) : BigInt(significant)
  return negative ? -unscaled : unscaled
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57
}

/** Number of decimal digits of |unscaled|, i.e. the precision the value needs. */
export function decimalDigits(unscaled: bigint): number {
  const magnitude = unscaled < 0n ? -unscaled : unscaled
  return magnitude === 0n ? 1 : magnitude.toString().length
}

/** Plain text with exactly `scale` digits after the point (`14.20`, `-0.05`, `7`). */
export function formatDecimalPlain(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n
  const digits = (negative ? -unscaled : unscaled).toString()
  if (scale === 0) return negative ? `-${digits}` : digits
  const padded = digits.padStart(scale + 1, '0')
  const point = padded.length - scale
  return `${negative ? '-' : ''}${padded.slice(0, point)}.${padded.slice(point)}`
}

/**
 * Java's `BigDecimal.toString` (and Python's `str(Decimal)`, the same rule): plain unless the
 * adjusted exponent is below -6, then scientific (`1E-7`, `-1.23E-10`). Used for the partition path,
 * where Iceberg's writers print decimals this way.
 */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n
  const digits = (negative ? -unscaled : unscaled).toString()
  const adjusted = digits.length - 1 - scale
  if (adjusted >= -6) return formatDecimalPlain(unscaled, scale)
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
  return `${negative ? '-' : ''}${mantissa}E${adjusted}`
}

/**
 * Minimum-length two's-complement big-endian bytes of the unscaled value (Java's
 * `BigInteger.toByteArray`): the spec's decimal form for bounds and for the bucket hash.
 * Note pyiceberg 0.11 writes one byte more for -2^(8k-1) (e.g. -128 -> ff 80, Java and this: 80).
 */
export function decimalToBytes(unscaled: bigint): Uint8Array {
  let length = 1
  // Grow until the value fits in `length` signed bytes.
  for (let limit = 128n; unscaled >= limit || unscaled < -limit; limit <<= 8n) length++
  const bytes = new Uint8Array(length)
  let rest = BigInt.asUintN(length * 8, unscaled)
  for (let i = length - 1; i >= 0; i--) {
    bytes[i] = Number(rest & 0xffn)
    rest >>= 8n
  }
  return bytes
}

/** Two's-complement big-endian bytes of any length -> the signed value. */
export function decimalFromBytes(bytes: Uint8Array): bigint {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  return BigInt.asIntN(bytes.length * 8, value)
}
