// The column types an operator writes in a dataset's `schema:`: Iceberg's primitive names
// (`long`, `timestamptz`, `decimal(10,2)`, `fixed[16]`) and nested forms for nested JSON
// (`list<string>`, `map<string, long>`, `struct<id: long, tags: list<string>>`), optionally
// followed by `not null`. Written by hand: it is a ten-rule grammar and no library parses
// Iceberg's type names.
import { FloeError } from '../errors.ts'
import type { IcebergType, NestedField, PrimitiveTypeName } from '../iceberg/index.ts'

const primitives = new Set<PrimitiveTypeName>([
  'boolean',
  'int',
  'long',
  'float',
  'double',
  'date',
  'time',
  'timestamp',
  'timestamptz',
  'string',
  'uuid',
  'binary',
])

/** A parsed column type; field ids are placeholders (0) until `assignFieldIds` numbers them. */
export interface ColumnType {
  type: IcebergType
  required: boolean
}

class Parser {
  #pos = 0
  readonly #text: string
  readonly #column: string

  constructor(text: string, column: string) {
    this.#text = text
    this.#column = column
  }

  fail(problem: string): never {
    throw new FloeError('CONFIG_INVALID', `type of column ${this.#column}: ${problem} in '${this.#text}'`)
  }

  skip(): void {
    while (this.#pos < this.#text.length && /\s/.test(this.#text[this.#pos] ?? '')) this.#pos++
  }

  peek(): string {
    this.skip()
    return this.#text[this.#pos] ?? ''
  }

  expect(char: string): void {
    if (this.peek() !== char) this.fail(`expected '${char}' at position ${this.#pos + 1}`)
    this.#pos++
  }

  word(): string {
    this.skip()
    const match = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.#text.slice(this.#pos))
    if (!match) this.fail(`expected a name at position ${this.#pos + 1}`)
    this.#pos += match[0].length
    return match[0]
  }

  integer(): number {
    this.skip()
    const match = /^\d+/.exec(this.#text.slice(this.#pos))
    if (!match) this.fail(`expected a number at position ${this.#pos + 1}`)
    this.#pos += match[0].length
    return Number(match[0])
  }

  atEnd(): boolean {
    this.skip()
    return this.#pos >= this.#text.length
  }

  notNull(): boolean {
    const rest = this.#text.slice(this.#pos).trim().toLowerCase()
    if (rest === '') return false
    if (/^not\s+null$/.test(rest)) {
      this.#pos = this.#text.length
      return true
    }
    return this.fail(`unexpected '${rest}'`)
  }

  type(): IcebergType {
    const name = this.word().toLowerCase()
    if (primitives.has(name as PrimitiveTypeName)) return name as PrimitiveTypeName
    switch (name) {
      case 'decimal': {
        this.expect('(')
        const precision = this.integer()
        this.expect(',')
        const scale = this.integer()
        this.expect(')')
        if (precision < 1 || precision > 38) this.fail('decimal precision must be 1 to 38')
        if (scale > precision) this.fail('decimal scale must not exceed its precision')
        return `decimal(${precision}, ${scale})`
      }
      case 'fixed': {
        this.expect('[')
        const length = this.integer()
        this.expect(']')
        if (length < 1) this.fail('fixed length must be at least 1')
        return `fixed[${length}]`
      }
      case 'list': {
        this.expect('<')
        const element = this.type()
        this.expect('>')
        return { type: 'list', 'element-id': 0, element, 'element-required': false }
      }
      case 'map': {
        this.expect('<')
        const key = this.type()
        this.expect(',')
        const value = this.type()
        this.expect('>')
        return { type: 'map', 'key-id': 0, key, 'value-id': 0, value, 'value-required': false }
      }
      case 'struct': {
        this.expect('<')
        const fields: NestedField[] = []
        const names = new Set<string>()
        do {
          if (fields.length) this.expect(',')
          const field = this.word()
          if (names.has(field)) this.fail(`field ${field} appears twice`)
          names.add(field)
          this.expect(':')
          fields.push({ id: 0, name: field, required: false, type: this.type() })
        } while (this.peek() === ',')
        this.expect('>')
        return { type: 'struct', fields }
      }
      default:
        return this.fail(`unknown type '${name}'`)
    }
  }
}

export function parseColumnType(text: string, column: string): ColumnType {
  const parser = new Parser(text, column)
  const type = parser.type()
  const required = parser.notNull()
  if (!parser.atEnd()) parser.fail('unexpected text after the type')
  return { type, required }
}

/**
 * Numbers every field, element, key and value depth-first from `next`, as Iceberg requires of a
 * new schema (ids unique across the whole schema). Returns the next free id.
 */
export function assignFieldIds(type: IcebergType, next: () => number): IcebergType {
  if (typeof type === 'string') return type
  switch (type.type) {
    case 'struct': {
      const fields = type.fields.map((f) => ({ ...f, id: next() }))
      return { type: 'struct', fields: fields.map((f) => ({ ...f, type: assignFieldIds(f.type, next) })) }
    }
    case 'list': {
      const elementId = next()
      return { ...type, 'element-id': elementId, element: assignFieldIds(type.element, next) }
    }
    case 'map': {
      const keyId = next()
      const valueId = next()
      return {
        ...type,
        'key-id': keyId,
        'value-id': valueId,
        key: assignFieldIds(type.key, next),
        value: assignFieldIds(type.value, next),
      }
    }
  }
}
