// Test support for the pyiceberg cross-checks of shared/iceberg: the stack's Python (the
// independent reader) and a seeded sampler, so a fixed seed gives the same sample on every run.
// Not part of the product: only *.test.ts files import it.
import { join } from 'node:path'

const stackDir = process.env.FLOE_STACK_DIR ?? join(import.meta.dirname, '..', '..', '.stack')
export const stackPython = join(stackDir, 'venv', 'bin', 'python')

/** mulberry32 with helpers for integers, 64-bit longs, bytes and picks. */
export function seededSample(seed: number) {
  let a = seed
  const next = (): number => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const integer = (min: number, max: number) => Math.floor(min + next() * (max - min + 1))
  return {
    next,
    integer,
    bigint64: () => BigInt.asIntN(64, (BigInt(integer(0, 2 ** 32 - 1)) << 32n) | BigInt(integer(0, 2 ** 32 - 1))),
    bytes: (length: number) => Uint8Array.from({ length }, () => integer(0, 255)),
    pick: <T>(items: readonly T[]): T => items[integer(0, items.length - 1)]!,
  }
}
