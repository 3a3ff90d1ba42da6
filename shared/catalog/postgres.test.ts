import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import pg from 'pg'
import { classifyPostgresFailure, formatPostgres } from './postgres.ts'

/** An ErrorResponse from the server, as node-postgres hands it over. */
function serverError(code: string, message = 'x'): Error {
  const error = new pg.DatabaseError(message, message.length, 'error')
  error.code = code
  return error
}

function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code}`), { code })
}

describe('reading a PostgreSQL failure', () => {
  test('a server that refuses Floe: authentication, no such database, no privilege, no password to give', () => {
    assert.equal(
      classifyPostgresFailure(serverError('28P01', 'password authentication failed for user "floe"')),
      'refused',
    )
    assert.equal(classifyPostgresFailure(serverError('28000', 'no pg_hba.conf entry')), 'refused')
    assert.equal(classifyPostgresFailure(serverError('3D000', 'database "nope" does not exist')), 'refused')
    assert.equal(classifyPostgresFailure(serverError('42501', 'permission denied for table iceberg_tables')), 'refused')
    assert.equal(
      classifyPostgresFailure(new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string')),
      'refused',
    )
  })

  test('a server that cannot serve now, or no answer at all', () => {
    for (const code of ['57P01', '57P03', '08006', '53300']) {
      assert.equal(classifyPostgresFailure(serverError(code)), 'unavailable', code)
    }
    assert.equal(classifyPostgresFailure(socketError('ECONNREFUSED')), 'unavailable')
    assert.equal(classifyPostgresFailure(socketError('EPIPE')), 'unavailable', 'a socket code is no SQLSTATE')
    assert.equal(classifyPostgresFailure(new Error('Connection terminated unexpectedly')), 'unavailable')
    assert.equal(classifyPostgresFailure(new Error('timeout exceeded when trying to connect')), 'unavailable')
  })

  test('a statement the server ran and refused', () => {
    assert.equal(classifyPostgresFailure(serverError('42P01', 'relation does not exist')), 'statement')
    assert.equal(classifyPostgresFailure(serverError('23505', 'duplicate key')), 'statement')
  })

  test('names the server without a password', () => {
    assert.equal(
      formatPostgres({ user: 'floe', host: '127.0.0.1', port: 5432, database: 'lake' }),
      'floe@127.0.0.1:5432/lake',
    )
  })
})
