/** An OpenAPI document as `/docs/json` answers it: named schemas and request bodies live under `components`. */
interface Document {
  components?: Record<string, Record<string, unknown> | undefined>
}

const REF = /^#\/components\/([^/]+)\/(.+)$/

/**
 * `node` (the paths, a response, a schema) with every `$ref` to a component (a named schema or request
 * body) replaced by that component, so that a test reads what a client generator sees. Named schemas do not
 * refer to themselves in this API.
 */
export function inlineRefs(document: Document, node: unknown): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineRefs(document, item))
  if (node === null || typeof node !== 'object') return node
  const { $ref } = node as { $ref?: unknown }
  const component = typeof $ref === 'string' ? REF.exec($ref) : null
  if (component)
    return inlineRefs(document, document.components?.[component[1] as string]?.[component[2] as string])
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inlineRefs(document, value)]))
}
