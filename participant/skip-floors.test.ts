import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { PartitionFloors, skipFloorsOf } from './skip-floors.ts'

describe("a routed partition's skip floors", () => {
  test('floors of one partition add up, the higher of two for a table', () => {
    const floors = new PartitionFloors()
    floors.merge(3, new Map([['ns.a', 40n]]))
    floors.merge(
      3,
      new Map([
        ['ns.a', 30n],
        ['ns.b', 55n],
      ]),
    )
    assert.deepEqual(
      [...(floors.get(3)?.byTable ?? [])],
      [
        ['ns.a', 40n],
        ['ns.b', 55n],
      ],
    )
    assert.equal(floors.get(3)?.below, 55n)
    assert.equal(floors.get(4), undefined)
  })

  test('read past the highest floor, or let go of, a partition has none', () => {
    const floors = new PartitionFloors()
    floors.merge(
      0,
      new Map([
        ['ns.a', 10n],
        ['ns.b', 20n],
      ]),
    )
    floors.merge(1, new Map([['ns.a', 5n]]))
    floors.readTo(0, 19n)
    assert.ok(floors.get(0), 'ns.b still holds a record at 19')
    floors.readTo(0, 20n)
    assert.equal(floors.get(0), undefined)
    assert.deepEqual([...floors.byKey((p) => `t/${p}`).keys()], ['t/1'])
    floors.forget(1)
    assert.equal(floors.byKey(String).size, 0)
  })

  test('no floor named: nothing to look up', () => {
    assert.equal(skipFloorsOf(new Map()), undefined)
    const floors = new PartitionFloors()
    floors.merge(0, new Map())
    assert.equal(floors.get(0), undefined)
  })
})
