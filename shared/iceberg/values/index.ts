// Public surface of shared/iceberg/values: JSON -> IcebergValue conversion (compiled per column),
// the spec's single-value serializations (binary for bounds, JSON for partition values), the bound
// order and truncation, and the text forms other Iceberg parts print values in. What is not
// re-exported here is internal (describe.ts, convert-primitive.ts, a few helpers of the others).
// The pyiceberg_*.py script serves the tests.
export {
  compareBytes,
  compareUtf8,
  compareValues,
  DEFAULT_BOUND_LENGTH,
  truncateLowerBound,
  truncateUpperBound,
} from './bounds.ts'
export { decodeBase64, encodeBase64, encodeHex, formatUuid, parseUuid } from './bytes.ts'
export {
  daysFromCivil,
  daysFromMicros,
  formatHourOrdinal,
  formatIsoDate,
  formatIsoTime,
  formatIsoTimestamp,
  formatMonthOrdinal,
  formatYearOrdinal,
  hoursFromMicros,
  monthsFromDays,
  parseIsoDate,
  parseIsoTime,
  parseIsoTimestamp,
  yearsFromDays,
} from './calendar.ts'
export {
  type ConverterOptions,
  compileConverter,
  compileRowConverter,
  type EpochUnit,
  type ValueConverter,
} from './convert.ts'
export { decimalFromBytes, decimalToBytes, formatDecimal, formatDecimalPlain, parseDecimalText } from './decimal.ts'
export {
  fromBinarySingleValue,
  fromJsonSingleValue,
  type JsonSingleObject,
  type JsonSingleValue,
  toBinarySingleValue,
  toJsonSingleValue,
  toJsonSingleValueText,
} from './serialize.ts'
