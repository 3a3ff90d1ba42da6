// A dataset's customMapping compiled once: one JMESPath syntax tree per column, evaluated with
// @jmespath-community/jmespath's TreeInterpreter (the `jmespath` package re-parses the expression
// on every call and measured 4-16x slower; docs/decisions.md, "Mapping").
//
// Plain dotted paths (`user.id`, `a."b c".d`) skip the interpreter: a loop over the precomputed
// field names. Measured with decode.bench.ts (12 columns, all plain paths, 20,000 distinct 1 KiB
// events, ns per event, four runs): mapping 473-543 with the loop vs 658-709 through the
// interpreter; the whole decode 4,608-4,731 vs 4,843-5,204, so 5-10% of it. Kept: it pays, it is
// small, and it reads own properties only where a name is inherited (see OWN_PATH). Tests check it
// against the interpreter on every shape of input.
import { compile, type JSONValue, TreeInterpreter } from '@jmespath-community/jmespath'

export type ExpressionNode = ReturnType<typeof compile>

/** How a column's expression is evaluated; numbers so the hot loop compares small integers. */
export const INTERPRETED = 0
/** A plain dotted path over field names that no object inherits. */
export const PLAIN_PATH = 1
/**
 * A plain dotted path with a name every object inherits (`constructor`, `toString`, `__proto__`):
 * read own properties only. The interpreter itself reads `value[name]`, so an event without a
 * `constructor` field would map Object's constructor function into the column.
 */
export const OWN_PATH = 2

/** Not in the value: the record's Kafka coordinates (`$kafka.offset`, ...; kafka-columns.ts). */
export const KAFKA_SOURCE = 3

export type EvaluationKind = typeof INTERPRETED | typeof PLAIN_PATH | typeof OWN_PATH | typeof KAFKA_SOURCE

export interface ColumnExpression {
  text: string
  node: ExpressionNode
  kind: EvaluationKind
  /** The field names of a plain path; empty for an interpreted expression. */
  path: string[]
}

/** The field names of `a.b."c d"`, or undefined when the expression is anything else. */
function plainPath(node: ExpressionNode): string[] | undefined {
  if (node.type === 'Field') return [node.name]
  if (node.type === 'Subexpression') {
    const left = plainPath(node.left)
    const right = left && plainPath(node.right)
    return left && right ? [...left, ...right] : undefined
  }
  return undefined
}

export function compileColumnExpression(text: string, plainPaths: boolean): ColumnExpression {
  const node = compile(text)
  const path = plainPaths ? plainPath(node) : undefined
  if (path === undefined) return { text, node, kind: INTERPRETED, path: [] }
  const inherited = path.some((name) => name in Object.prototype)
  return { text, node, kind: inherited ? OWN_PATH : PLAIN_PATH, path }
}

/** The interpreter's Field semantics: a non-object (or array) or a missing name gives null. */
export function walkPath(data: unknown, path: string[]): unknown {
  let value = data
  for (let i = 0; i < path.length; i++) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null
    value = (value as Record<string, unknown>)[path[i]!]
    if (value === undefined) return null
  }
  return value
}

export function walkOwnPath(data: unknown, path: string[]): unknown {
  let value = data
  for (let i = 0; i < path.length; i++) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null
    const name = path[i]!
    if (!Object.hasOwn(value, name)) return null
    value = (value as Record<string, unknown>)[name]
  }
  return value
}

export function interpret(node: ExpressionNode, data: unknown): unknown {
  return TreeInterpreter.search(node, data as JSONValue)
}
