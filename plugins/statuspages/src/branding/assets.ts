import { createHash } from 'node:crypto'
import { imageSize } from 'image-size'

export const assetKinds = ['logo', 'favicon'] as const
export type AssetKind = (typeof assetKinds)[number]

/**
 * What each asset may be. Raster images only: an SVG can carry script and references to other
 * sites, which a page that allows no script and loads nothing from elsewhere must not serve.
 */
export const ASSET_RULES: Record<AssetKind, { types: Record<string, string>; maxBytes: number; maxSide: number }> = {
  logo: { types: { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp' }, maxBytes: 256 * 1024, maxSide: 2048 },
  favicon: { types: { png: 'image/png', ico: 'image/x-icon' }, maxBytes: 64 * 1024, maxSide: 512 },
}

/** The media types an upload may be sent as (an `.ico` is also sent as Microsoft's). */
export const UPLOAD_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/x-icon', 'image/vnd.microsoft.icon', 'image/svg+xml']

export interface CheckedAsset {
  contentType: string
  /** The file's extension in its URL. */
  extension: string
  sha256: string
  width: number
  height: number
}

/**
 * Reads what the bytes are, not what the request says they are (image-size looks at their
 * signature and header), and holds them to the kind's rules: answers the asset, or why not.
 */
export function checkAsset(kind: AssetKind, bytes: Buffer): CheckedAsset | { refused: string } {
  const rules = ASSET_RULES[kind]
  const allowed = Object.keys(rules.types).join(', ')
  if (bytes.length > rules.maxBytes)
    return { refused: `a ${kind} may be at most ${rules.maxBytes / 1024} KB; this is ${Math.ceil(bytes.length / 1024)} KB` }
  // An SVG without a size is no image to image-size: it is refused for what it is, all the same.
  if (/^\s*(?:\ufeff)?</.test(bytes.subarray(0, 256).toString('utf8')))
    return { refused: 'SVG can carry script and links to other sites: send a PNG, JPEG or WebP' }
  let size: ReturnType<typeof imageSize>
  try {
    size = imageSize(bytes)
  } catch {
    return { refused: `the ${kind} is not an image this service reads: send ${allowed}` }
  }
  const type = size.type === 'jpeg' ? 'jpg' : size.type
  if (type === 'svg') return { refused: 'SVG can carry script and links to other sites: send a PNG, JPEG or WebP' }
  const contentType = type ? rules.types[type] : undefined
  if (!type || !contentType) return { refused: `a ${kind} must be ${allowed}; this is ${size.type ?? 'unknown'}` }
  const { width, height } = size
  if (!width || !height) return { refused: `the ${kind} has no size` }
  if (width > rules.maxSide || height > rules.maxSide)
    return { refused: `a ${kind} may be at most ${rules.maxSide}×${rules.maxSide} pixels; this is ${width}×${height}` }
  return { contentType, extension: type, sha256: createHash('sha256').update(bytes).digest('hex'), width, height }
}

/** The file name an asset is served at: its hash (so it can be cached for ever) and extension. */
export const assetFileName = (asset: { sha256: string; contentType: string }) =>
  `${asset.sha256.slice(0, 32)}.${extensionOf(asset.contentType)}`

function extensionOf(contentType: string): string {
  for (const rules of Object.values(ASSET_RULES))
    for (const [extension, type] of Object.entries(rules.types)) if (type === contentType) return extension
  return 'bin'
}
