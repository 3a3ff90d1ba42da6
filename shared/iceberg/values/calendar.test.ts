import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
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
  yearsFromDays,
} from './index.ts'

const msPerDay = 86_400_000

describe('the calendar', () => {
  test('agrees with Date for every day from year 1 to 9999', () => {
    const date = new Date(0)
    for (let days = -719162; days <= 2932896; days += 1) {
      date.setTime(days * msPerDay)
      const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()]
      if (daysFromCivil(year, month, day) !== days) assert.fail(`daysFromCivil(${year}, ${month}, ${day}) != ${days}`)
      const text = date.toISOString().slice(0, 10)
      if (formatIsoDate(days) !== text) assert.fail(`formatIsoDate(${days}) = ${formatIsoDate(days)}, not ${text}`)
      if (parseIsoDate(text) !== days) assert.fail(`parseIsoDate(${text}) != ${days}`)
      if (yearsFromDays(days) !== year - 1970) assert.fail(`yearsFromDays(${days})`)
      if (monthsFromDays(days) !== (year - 1970) * 12 + month - 1) assert.fail(`monthsFromDays(${days})`)
    }
  })

  const floors: [bigint, number, number][] = [
    [0n, 0, 0],
    [-1n, -1, -1],
    [86_399_999_999n, 0, 23],
    [86_400_000_000n, 1, 24],
    [-86_400_000_000n, -1, -24],
    [-86_400_000_001n, -2, -25],
    // Beyond 2^53 microseconds the BigInt path takes over.
    [253402300799999999n, 2932896, 70389527],
    [-(2n ** 63n), -106751992, -2562047789],
    [2n ** 63n - 1n, 106751991, 2562047788],
  ]
  for (const [micros, days, hours] of floors) {
    test(`floors ${micros} microseconds to day ${days} and hour ${hours}`, () => {
      assert.equal(daysFromMicros(micros), days)
      assert.equal(hoursFromMicros(micros), hours)
    })
  }

  test('finds the floor at exact day boundaries near 2^53 microseconds, the end of the float path', () => {
    const day = 86_400_000_000n
    for (const k of [104249n, 104248n, -104249n]) {
      assert.equal(daysFromMicros(k * day), Number(k))
      assert.equal(daysFromMicros(k * day - 1n), Number(k) - 1)
    }
  })

  const human: [string, string][] = [
    [formatYearOrdinal(47), '2017'],
    [formatYearOrdinal(-1), '1969'],
    [formatMonthOrdinal(574), '2017-11'],
    [formatMonthOrdinal(-1), '1969-12'],
    [formatMonthOrdinal(-12), '1969-01'],
    [formatMonthOrdinal(-13), '1968-12'],
    [formatHourOrdinal(419686), '2017-11-16-22'],
    [formatHourOrdinal(-1), '1969-12-31-23'],
    [formatIsoTime(0), '00:00:00'],
    [formatIsoTime(81068000001), '22:31:08.000001'],
    [formatIsoTimestamp(-1n, false), '1969-12-31T23:59:59.999999'],
    [formatIsoTimestamp(1510871468000000n, true), '2017-11-16T22:31:08+00:00'],
    [formatIsoDate(-719163), '0000-12-31'],
  ]
  for (const [actual, expected] of human) {
    test(`prints ${expected}`, () => assert.equal(actual, expected))
  }
})
