// A dataset's route on the record path: the table of each record, read from the value the decoder
// already parsed (or from the record's coordinates), as a small number. Tables are numbered in the
// order records first name them, so the WAL keys its writers by a number and the per-record cost
// is one field read and one map lookup; a table's name is made once, when it first appears.
//
// The route is a function of the record and the configuration alone (the first rule of the
// argument in docs/architecture.md): a record read twice goes to the same table both times.
import { type DatasetRoute, routedTable, routeValueName } from '../../shared/config/index.ts'
import { messageOf } from '../../shared/index.ts'
import { compileKafkaColumn, type RecordCoordinates } from './kafka-columns.ts'
import {
  compileColumnExpression,
  type ExpressionNode,
  interpret,
  OWN_PATH,
  PLAIN_PATH,
  walkOwnPath,
  walkPath,
} from './mapping.ts'
import { malformed } from './reasons.ts'

/** The table numbers a route hands out, and the name behind each. */
export interface RouteTables {
  /** By number: the table's `namespace.table`. */
  readonly names: readonly string[]
}

export class RecordRoute implements RouteTables {
  readonly #route: DatasetRoute
  readonly #read: (data: object, record: RecordCoordinates | undefined) => unknown
  /** Route value as it came -> table number; a value never seen costs one name check, once. */
  readonly #byValue = new Map<unknown, number>()
  readonly #byTable = new Map<string, number>()
  readonly #names: string[] = []
  readonly #fallback: number | undefined
  /** The route reads the record's coordinates, not its value. */
  readonly readsCoordinates: boolean

  constructor(route: DatasetRoute) {
    this.#route = route
    this.readsCoordinates = route.source !== undefined
    this.#read = route.source ? coordinateReader(route) : valueReader(route)
    this.#fallback = route.fallback === undefined ? undefined : this.#number(route.fallback)
  }

  get names(): readonly string[] {
    return this.#names
  }

  /**
   * The table number of a record, given its parsed value (and coordinates when the route reads
   * them). A record whose value names no table goes to the fallback, or is refused (no-route).
   */
  tableOf(data: object, record?: RecordCoordinates): number {
    const value = this.#read(data, record)
    const known = this.#byValue.get(value)
    if (known !== undefined) return known
    const name = routeValueName(value)
    const values = this.#route.values
    if ('name' in name && (values === undefined || values.has(name.name))) {
      const table = this.#number(routedTable(this.#route, name.name))
      // only names are remembered (a name comes from a string, a number or a boolean): a value
      // that names no table may be one of endless many
      this.#byValue.set(value, table)
      return table
    }
    if (this.#fallback !== undefined) return this.#fallback
    const refused = 'refused' in name ? name.refused : `the route value '${name.name}' is not one of route.values`
    throw malformed('no-route', `${refused} (route.field ${this.#route.field}) and the route has no fallback`, {
      details: { field: this.#route.field },
    })
  }

  #number(table: string): number {
    let number = this.#byTable.get(table)
    if (number === undefined) {
      number = this.#names.length
      this.#names.push(table)
      this.#byTable.set(table, number)
    }
    return number
  }
}

function coordinateReader(route: DatasetRoute): (data: object, record: RecordCoordinates | undefined) => unknown {
  // a key or header read as text, a partition as its number: routeValueName takes either
  const read = compileKafkaColumn(route.source!, route.source!.kind === 'partition' ? 'int' : 'string', 'route', false)
  return (_data, record) => (record === undefined ? undefined : read(record))
}

function valueReader(route: DatasetRoute): (data: object) => unknown {
  const expression = compileColumnExpression(route.field, true)
  const path = expression.path
  if (expression.kind === PLAIN_PATH) return (data) => walkPath(data, path)
  if (expression.kind === OWN_PATH) return (data) => walkOwnPath(data, path)
  const node: ExpressionNode = expression.node
  return (data) => {
    try {
      return interpret(node, data)
    } catch (error) {
      throw malformed('no-route', `route.field '${route.field}' failed: ${messageOf(error)}`, {
        cause: error,
        details: { field: route.field },
      })
    }
  }
}
