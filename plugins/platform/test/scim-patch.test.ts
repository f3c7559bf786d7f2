import t from 'tap'
import { applyPatch, readOperations } from '../src/scim/patch.js'
import { ScimError } from '../src/scim/errors.js'
import { enterpriseUserSchema, userSchema } from '../src/scim/schema/definitions.js'

// The PATCH reader on its own, without the HTTP layer's JSON parser in front of it: bodies
// from JSON.parse carry `__proto__` as an own key, the way any other parser could hand them over.
const schemas = [userSchema, enterpriseUserSchema]
/** The scimType a call is refused with, or undefined when it is not. */
function refusal(call: () => unknown): string | undefined {
  try {
    call()
    return undefined
  } catch (error) {
    return error instanceof ScimError ? error.scimType : String(error)
  }
}

const body = (operations: string) => JSON.parse(`{"Operations":[${operations}]}`) as unknown

t.test('prototype keys in values are refused before anything is applied', async (t) => {
  for (const operation of [
    '{"op":"add","value":{"__proto__":{"polluted":true}}}',
    '{"op":"add","path":"name","value":{"__proto__":{"polluted":true}}}',
    '{"op":"add","path":"emails","value":[{"value":"x","__proto__":{"polluted":true}}]}',
    '{"op":"add","value":{"urn:ietf:params:scim:schemas:extension:enterprise:2.0:User":{"__proto__":{"polluted":true}}}}',
  ]) {
    t.equal(
      refusal(() => readOperations(body(operation), schemas)),
      'invalidValue',
      operation,
    )
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined)
})

t.test('the patched copy inherits nothing an assignment could reach', async (t) => {
  const patched = applyPatch(
    { userName: 'a', name: { givenName: 'A' } },
    readOperations(body('{"op":"replace","path":"name.familyName","value":"B"}'), schemas),
  )
  t.same(JSON.parse(JSON.stringify(patched)), { userName: 'a', name: { givenName: 'A', familyName: 'B' } })
  t.equal(Object.getPrototypeOf(Object.getPrototypeOf(patched)), null)
  t.notOk('hasOwnProperty' in patched)
})
