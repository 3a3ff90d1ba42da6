import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { type ErrorCode, errorCodes, FloeError, isFatal, isFatalCode, isFloeError } from './errors.ts'

// What each code must mean for the worker: a fatal code stops it (an operator decides), a
// retryable one is tried again, the rest fail the one operation.
const expected: Record<ErrorCode, { retryable: boolean; fatal: boolean }> = {
  CONFIG_INVALID: { retryable: false, fatal: true },
  KAFKA_UNAVAILABLE: { retryable: true, fatal: false },
  KAFKA_REFUSED: { retryable: false, fatal: false },
  KAFKA_AUTHENTICATION_FAILED: { retryable: false, fatal: true },
  KAFKA_TLS_FAILED: { retryable: false, fatal: true },
  CATALOG_UNAVAILABLE: { retryable: true, fatal: false },
  CATALOG_REFUSED: { retryable: false, fatal: true },
  CATALOG_AUTHENTICATION_FAILED: { retryable: false, fatal: true },
  STORAGE_UNAVAILABLE: { retryable: true, fatal: false },
  CATALOG_NOT_FOUND: { retryable: false, fatal: false },
  CATALOG_ALREADY_EXISTS: { retryable: false, fatal: false },
  CATALOG_BAD_REQUEST: { retryable: false, fatal: false },
  COMMIT_CONFLICT: { retryable: true, fatal: false },
  COMMIT_STATE_UNKNOWN: { retryable: true, fatal: false },
  COMMIT_REJECTED: { retryable: false, fatal: false },
  CONVERSION_FAILED: { retryable: false, fatal: false },
  RECORD_MALFORMED: { retryable: false, fatal: false },
  STORAGE_NOT_FOUND: { retryable: false, fatal: false },
  PROTOCOL_UNDECODABLE: { retryable: false, fatal: false },
  PROTOCOL_VERSION_UNSUPPORTED: { retryable: false, fatal: false },
  ROUTE_SWITCH_PENDING: { retryable: true, fatal: false },
  INVARIANT_BROKEN: { retryable: false, fatal: true },
  WAL_IN_USE: { retryable: false, fatal: true },
  BAD_RECORD_STOP: { retryable: false, fatal: true },
  INTERNAL_ERROR: { retryable: false, fatal: true },
}

describe('the error taxonomy', () => {
  test('every code is in the expected table and no expected code is missing', () => {
    assert.deepEqual(Object.keys(errorCodes).sort(), Object.keys(expected).sort())
  })

  for (const [code, flags] of Object.entries(expected) as [ErrorCode, (typeof expected)[ErrorCode]][]) {
    test(`${code} is ${flags.fatal ? 'fatal' : 'not fatal'} and ${flags.retryable ? 'retryable' : 'not retryable'}`, () => {
      const error = new FloeError(code, 'x', { cause: new Error('below'), details: { a: 1 } })
      assert.equal(error.code, code)
      assert.equal(error.retryable, flags.retryable)
      assert.equal(error.fatal, flags.fatal)
      assert.equal(isFatal(error), flags.fatal)
      assert.equal(isFatalCode(code), flags.fatal)
      assert.ok(isFloeError(error, code))
      assert.deepEqual(error.details, { a: 1 })
      assert.equal((error.cause as Error).message, 'below')
      // A code is never both: a fatal error is never retried.
      assert.ok(!(flags.fatal && flags.retryable))
    })
  }

  test('anything that is not a FloeError, or an unknown code, is not fatal', () => {
    assert.equal(isFatal(new Error('INVARIANT_BROKEN')), false)
    assert.equal(isFatal({ code: 'INVARIANT_BROKEN', fatal: true }), false)
    assert.equal(isFatal(undefined), false)
    assert.equal(isFatalCode(undefined), false)
    assert.equal(isFatalCode('ECONNREFUSED'), false)
    assert.equal(isFatalCode('toString'), false)
  })
})
