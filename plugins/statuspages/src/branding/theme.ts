import { createHash } from 'node:crypto'
import { Type } from 'typebox'

/**
 * The CSS variables a page's theme may set, with the colours a page without a theme shows. A
 * theme is values for these and nothing else: never CSS of the customer's, which could load
 * images from anywhere (and so report who reads the page), overlay the page or hide its status.
 */
export const THEME_DEFAULTS = {
  '--background': '#f6f7f9',
  '--text': '#1d2330',
  '--muted': '#5d6675',
  '--link': '#3558a8',
  '--card': '#ffffff',
  '--border': '#dde1e7',
  '--header-background': '#f6f7f9',
  '--header-text': '#1d2330',
  '--button': '#1d2330',
  '--button-text': '#ffffff',
} as const
export type ThemeVariable = keyof typeof THEME_DEFAULTS
export type Theme = Partial<Record<ThemeVariable, string>>

const HexColor = Type.String({ pattern: '^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$', description: 'A colour: #rgb or #rrggbb' })

export const ThemeSchema = Type.Object(
  Object.fromEntries(Object.keys(THEME_DEFAULTS).map((name) => [name, Type.Optional(HexColor)])) as Record<
    ThemeVariable,
    ReturnType<typeof Type.Optional<typeof HexColor>>
  >,
  {
    additionalProperties: false,
    description: `Colours of the page's declared CSS variables (${Object.keys(THEME_DEFAULTS).join(', ')}); unset ones keep their defaults. Text and its background must keep WCAG AA contrast (4.5:1)`,
  },
)

/** The pairs read as text on a background, which WCAG AA holds to 4.5:1 (normal-size text). */
const READ_PAIRS: Array<[ThemeVariable, ThemeVariable]> = [
  ['--text', '--background'],
  ['--muted', '--background'],
  ['--link', '--background'],
  ['--text', '--card'],
  ['--muted', '--card'],
  ['--link', '--card'],
  ['--header-text', '--header-background'],
  ['--button-text', '--button'],
]
export const WCAG_AA_CONTRAST = 4.5

const expand = (hex: string) => (hex.length === 4 ? `#${[...hex.slice(1)].map((digit) => digit + digit).join('')}` : hex).toLowerCase()

/** WCAG 2.2 relative luminance of an sRGB colour. */
function luminance(hex: string): number {
  const value = expand(hex)
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = parseInt(value.slice(at, at + 2), 16) / 255
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** WCAG 2.2 contrast ratio of two colours, from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (light + 0.05) / (dark + 0.05)
}

/** The theme with its defaults filled in, lower-case `#rrggbb`. */
export const fullTheme = (theme: Theme): Record<ThemeVariable, string> =>
  Object.fromEntries(
    (Object.keys(THEME_DEFAULTS) as ThemeVariable[]).map((name) => [name, expand(theme[name] ?? THEME_DEFAULTS[name])]),
  ) as Record<ThemeVariable, string>

/** The first pair of the theme below WCAG AA, in words; undefined when every pair reads. */
export function contrastProblem(theme: Theme): string | undefined {
  const colours = fullTheme(theme)
  for (const [text, background] of READ_PAIRS) {
    const ratio = contrastRatio(colours[text], colours[background])
    if (ratio < WCAG_AA_CONTRAST)
      return `${text} ${colours[text]} on ${background} ${colours[background]} has a contrast of ${(Math.floor(ratio * 100) / 100).toFixed(2)}:1; WCAG AA asks for at least ${WCAG_AA_CONTRAST}:1`
  }
  return undefined
}

/** The style rule that sets a theme's variables (values checked above: nothing but colours reaches it). */
export function themeRule(theme: Theme): string {
  const colours = fullTheme(theme)
  return `:root{${(Object.keys(colours) as ThemeVariable[]).map((name) => `${name}:${colours[name]}`).join(';')}}`
}

/** A style element's source as a Content-Security-Policy `style-src` source: its SHA-256. */
export const styleHash = (style: string) => `'sha256-${createHash('sha256').update(style).digest('base64')}'`
