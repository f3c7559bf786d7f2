import { makeBadge } from 'badge-maker'
import type { Indicator } from '../model.js'

const badgeColors: Record<Indicator, string> = { none: 'brightgreen', minor: 'yellow', major: 'orange', critical: 'red' }

/**
 * The page's status as a shields.io-style SVG badge (badge-maker, the library shields.io renders
 * with); its label takes the page's header colour when the page has a theme.
 */
export function renderBadge(label: string, status: { indicator: Indicator; description: string }, labelColor?: string): string {
  const message =
    status.indicator === 'none' && status.description === 'All Systems Operational' ? 'operational' : status.description.toLowerCase()
  return makeBadge({ label, message, color: badgeColors[status.indicator], ...(labelColor ? { labelColor } : {}) })
}
