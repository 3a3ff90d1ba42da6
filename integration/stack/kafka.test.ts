import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clusterId } from './kafka.ts'

test('a cluster id is 22 base64url characters and never starts with the option dash', () => {
  for (let i = 0; i < 20_000; i++) {
    const id = clusterId()
    assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/)
  }
})
