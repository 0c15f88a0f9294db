/** An OpenAPI document as `/docs/json` answers it: named schemas live under `components.schemas`. */
interface Document {
  components?: { schemas?: Record<string, unknown> }
}

const REF_PREFIX = '#/components/schemas/'

/**
 * `node` (a response, a schema) with every `$ref` to a named schema replaced by that schema, so that a test
 * reads what a client generator sees. Named schemas do not refer to themselves in this API.
 */
export function inlineRefs(document: Document, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(document, item))
  if (node === null || typeof node !== 'object') return node
  const { $ref } = node as { $ref?: unknown }
  if (typeof $ref === 'string' && $ref.startsWith(REF_PREFIX))
    return inlineRefs(document, document.components?.schemas?.[$ref.slice(REF_PREFIX.length)])
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineRefs(document, value)]))
}
