// A dataset's route: which of many tables each record goes to, by one of its fields
// (docs/architecture.md, "Several topics and many tables"). Checked here with the rest of the
// configuration, so a template that could name no table, a listed value that makes no table name
// or a fallback that is the ledger is refused before anything starts, naming the key.
//
// A route value becomes part of a table name, so it is held to a narrow rule (letters, digits,
// underscore, dash; folded to lower case, as catalogs that ignore case would fold it anyway and two
// spellings must not make two tables): a value with a dot would otherwise name another namespace,
// and one with a slash another path in the warehouse.
import { createHash } from 'node:crypto'
import { FloeError } from '../errors.ts'
import { type KafkaSource, parseSourceExpression } from './kafka-sources.ts'
import { qualifiedTable, type RawDataset } from './schema.ts'

/** The longest route value that names a table. */
export const MAX_ROUTE_VALUE_LENGTH = 100

const routeValueRule = /^[a-z0-9_-]+$/

/** `{value}` in a route's table template: where the record's value goes. */
export const ROUTE_PLACEHOLDER = '{value}'

/** The Kafka coordinates a route may read: ones with a few values each, never the offset or the time. */
const routableSources: ReadonlySet<KafkaSource['kind']> = new Set([
  'topic',
  'partition',
  'key',
  'timestampType',
  'header',
])

export interface DatasetRoute {
  /** The field as the operator wrote it: a JMESPath expression over the value, or a `$kafka` source. */
  field: string
  /** The `$kafka` source the field names; undefined for a JMESPath expression. */
  source: KafkaSource | undefined
  /** The table template, `namespace.prefix{value}suffix`. */
  table: string
  /** The only values that name a table (folded to lower case); undefined: any value. */
  values: ReadonlySet<string> | undefined
  /** The table of a record whose value names no table (absent, not a name, not listed); else the dead-letter path. */
  fallback: string | undefined
  /** How many tables' writers a worker keeps open at once, least recently used closed first. */
  maxOpenTables: number
}

function invalid(path: string, problem: string): never {
  throw new FloeError('CONFIG_INVALID', `${path}: ${problem}`)
}

/** A route value as a table name part, or why it is none. */
export function routeValueName(value: unknown): { name: string } | { refused: string } {
  let text: string
  if (typeof value === 'string') text = value.toLowerCase()
  else if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value)
  else if (typeof value === 'boolean') text = String(value)
  else if (value === undefined || value === null) return { refused: 'the record has no route value' }
  else return { refused: `a route value is a string, an integer or a boolean, not ${describe(value)}` }
  if (text.length === 0) return { refused: 'the route value is empty' }
  if (text.length > MAX_ROUTE_VALUE_LENGTH) {
    return { refused: `the route value is longer than ${MAX_ROUTE_VALUE_LENGTH} characters` }
  }
  if (!routeValueRule.test(text)) {
    return { refused: `the route value '${text}' has a character other than a letter, a digit, _ or -` }
  }
  return { name: text }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'number') return `the number ${value}`
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

/** The table a route value's name (routeValueName) sends records to. */
export function routedTable(route: Pick<DatasetRoute, 'table'>, name: string): string {
  return route.table.replace(ROUTE_PLACEHOLDER, name)
}

/**
 * True if the route can send records to `table` (`namespace.name`): the template with a value in
 * place of `{value}` that a record's value would give (one the route lists, when it lists them),
 * or the fallback; never the ledger. What maintenance looks for among a namespace's tables.
 */
export function routeCanName(
  route: Pick<DatasetRoute, 'table' | 'values' | 'fallback'>,
  ledger: string,
  table: string,
): boolean {
  if (table === ledger) return false
  if (table === route.fallback) return true
  const at = route.table.indexOf(ROUTE_PLACEHOLDER)
  const prefix = route.table.slice(0, at)
  const suffix = route.table.slice(at + ROUTE_PLACEHOLDER.length)
  if (table.length <= prefix.length + suffix.length || !table.startsWith(prefix) || !table.endsWith(suffix))
    return false
  const value = table.slice(prefix.length, table.length - suffix.length)
  const name = routeValueName(value)
  return 'name' in name && name.name === value && (route.values === undefined || route.values.has(value))
}

/** The namespaces (`a.b`) that hold the tables a route can name: the template's and the fallback's. */
export function routeNamespaces(route: Pick<DatasetRoute, 'table' | 'fallback'>): string[] {
  const namespaceOf = (table: string) => table.slice(0, table.lastIndexOf('.'))
  const namespaces = new Set([namespaceOf(route.table)])
  if (route.fallback !== undefined) namespaces.add(namespaceOf(route.fallback))
  return [...namespaces]
}

/**
 * The dataset's route, checked; undefined without one. With a route the dataset's `table` is its
 * ledger (the table that holds its progress and no rows), so no route may name it.
 */
export function resolveRoute(raw: RawDataset, at: string): DatasetRoute | undefined {
  const route = raw.route
  if (route === undefined) return undefined
  const path = `${at}.route`
  if (raw.mode === 'raw') invalid(path, 'a raw archive goes to one table: remove route')
  if (raw.customMapping === undefined) {
    // each table would widen its own schema as its records demand: not built with routing
    invalid(path, 'a routed dataset maps its columns: give customMapping and schema')
  }
  const source = parseSourceExpression(route.field)
  if (source instanceof Error) invalid(`${path}.field`, source.message)
  if (source && !routableSources.has(source.kind)) {
    invalid(
      `${path}.field`,
      `a route by ${route.field} would make a table per record: route by a field of the value, or by $kafka.topic, $kafka.partition, $kafka.key, $kafka.timestampType or $kafka.headers.<name>`,
    )
  }
  const template = route.table
  const at0 = template.indexOf(ROUTE_PLACEHOLDER)
  if (at0 < 0 || template.indexOf(ROUTE_PLACEHOLDER, at0 + 1) >= 0) {
    invalid(
      `${path}.table`,
      `write ${ROUTE_PLACEHOLDER} once, where the route value goes (ns.events_${ROUTE_PLACEHOLDER})`,
    )
  }
  if (template.indexOf('.', at0) >= 0) {
    invalid(
      `${path}.table`,
      `${ROUTE_PLACEHOLDER} goes in the table's name, after the last dot (a value never names a namespace)`,
    )
  }
  if (!qualifiedTable.test(routedTable(route, 'x'))) invalid(`${path}.table`, 'expected namespace.table')
  const ledger = raw.table
  const listed = route.values?.map((value, i) => {
    const name = routeValueName(value)
    if ('refused' in name) invalid(`${path}.values[${i}]`, name.refused)
    if (routedTable(route, name.name) === ledger) {
      invalid(`${path}.values[${i}]`, `routes to ${ledger}, the dataset's table, which holds its progress`)
    }
    return name.name
  })
  if (route.fallback !== undefined && route.fallback === ledger) {
    invalid(`${path}.fallback`, `${ledger} is the dataset's table, which holds its progress: name another`)
  }
  return {
    field: route.field,
    source,
    table: template,
    values: listed && new Set(listed),
    fallback: route.fallback,
    maxOpenTables: route.maxOpenTables,
  }
}

/**
 * What decides a record's table, as plain data: the route without its writer bound. Kept in the
 * ledger for every route generation whose tables may still hold records past the ledger, so a
 * worker of a later route can tell which table of the earlier one holds a record.
 */
export interface RouteDefinition {
  field: string
  table: string
  /** Sorted; absent: any value. */
  values?: string[]
  fallback?: string
}

export function routeDefinitionOf(
  route: Pick<DatasetRoute, 'field' | 'table' | 'values' | 'fallback'>,
): RouteDefinition {
  return {
    field: route.field,
    table: route.table,
    ...(route.values === undefined ? {} : { values: [...route.values].sort() }),
    ...(route.fallback === undefined ? {} : { fallback: route.fallback }),
  }
}

/**
 * A route's identity: two definitions that send every record to the same table have the same
 * fingerprint (the keys in one order, the values sorted), and any change to the field, the
 * template, the values or the fallback changes it. The writer bound is not part of it.
 */
export function routeFingerprint(definition: RouteDefinition): string {
  const canonical = JSON.stringify([
    definition.field,
    definition.table,
    definition.values ?? null,
    definition.fallback ?? null,
  ])
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16)
}

/** A route's definition and fingerprint: what the ledger records of it and what its statuses name. */
export function routeIdentity(route: Pick<DatasetRoute, 'field' | 'table' | 'values' | 'fallback'>): {
  fingerprint: string
  definition: RouteDefinition
} {
  const definition = routeDefinitionOf(route)
  return { fingerprint: routeFingerprint(definition), definition }
}

/** The route a definition (an earlier generation's, from the ledger) describes, for reading records by it. */
export function routeOfDefinition(definition: RouteDefinition): DatasetRoute {
  const source = parseSourceExpression(definition.field)
  if (source instanceof Error) throw new FloeError('INVARIANT_BROKEN', `an earlier route's field: ${source.message}`)
  return {
    field: definition.field,
    source,
    table: definition.table,
    values: definition.values && new Set(definition.values),
    fallback: definition.fallback,
    maxOpenTables: 0,
  }
}
