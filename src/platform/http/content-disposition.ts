/**
 * `attachment; filename="..."` with quotes and backslashes escaped and anything outside printable
 * ASCII replaced (a header cannot carry it), plus RFC 6266 `filename*` with the exact name when it differs.
 */
export function contentDisposition(fileName: string): string {
  const name = fileName || 'attachment'
  const plain = name.replace(/[^\x20-\x7e]/g, '_')
  const header = `attachment; filename="${plain.replace(/["\\]/g, '\\$&')}"`
  if (plain === name) return header
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return `${header}; filename*=UTF-8''${encoded}`
}
