import { Type, type Static } from 'typebox'

export const channels = ['email', 'sms', 'voice', 'push'] as const
export type Channel = (typeof channels)[number]
export const priorities = ['P1', 'P2', 'P3', 'P4', 'P5'] as const

const PhoneNumber = Type.Union([Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +4915112345678' }), Type.Null()])
const Clock = Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 24-hour' })
const ChannelList = Type.Array(Type.Enum(channels), { uniqueItems: true })
const Rule = Type.Object(
  {
    channel: Type.Enum(channels),
    delayMinutes: Type.Integer({ minimum: 0, maximum: 60, description: 'After the page, while nobody has acknowledged' }),
  },
  { additionalProperties: false, title: 'NotificationRule' },
)
const RuleList = Type.Array(Rule, { minItems: 1, maxItems: 10 })
export const urgencies = ['high', 'low'] as const

export const NotificationPreferences = Type.Object(
  {
    channels: Type.Object({
      email: Type.Object({
        enabled: Type.Boolean(),
        address: Type.Union([Type.String({ format: 'email', maxLength: 320 }), Type.Null()], { description: 'Null: the account’s e-mail' }),
      }),
      sms: Type.Object({ enabled: Type.Boolean(), phoneNumber: PhoneNumber }),
      voice: Type.Object({ enabled: Type.Boolean(), phoneNumber: PhoneNumber }),
      push: Type.Object({ enabled: Type.Boolean() }),
    }),
    priorities: Type.Object(
      Object.fromEntries(priorities.map((priority) => [priority, ChannelList])) as Record<(typeof priorities)[number], typeof ChannelList>,
      {
        description: 'Which channels each alert priority reaches; a disabled channel receives nothing',
      },
    ),
    rules: Type.Union(
      [
        Type.Object(
          { high: RuleList, low: RuleList },
          {
            description:
              'Per urgency, each channel with its delay: e.g. push at 0, SMS at 2, voice at 5 minutes while the page is unacknowledged. High urgency: P1 and P2 alerts within their service’s support hours; low: the rest',
          },
        ),
        Type.Null(),
      ],
      { description: 'Null (the default): `priorities` says which channels page at once' },
    ),
    whenResolved: Type.Boolean({
      description: 'Tell me when an alert that paged me resolves (by e-mail, SMS or push, as it paged me; never by a call)',
    }),
    quietHours: Type.Object({
      enabled: Type.Boolean(),
      start: Clock,
      end: Clock,
      timeZone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone' }),
      bypassPriorities: Type.Array(Type.Enum(priorities), {
        uniqueItems: true,
        description: 'Priorities that still notify during quiet hours',
      }),
    }),
  },
  { title: 'NotificationPreferences' },
)
export type NotificationPreferences = Static<typeof NotificationPreferences>

/** A change: any part of any section; lists are replaced whole. */
export const NotificationPreferencesPatch = Type.Object(
  {
    channels: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(Type.Partial(NotificationPreferences.properties.channels.properties.email, { additionalProperties: false })),
          sms: Type.Optional(Type.Partial(NotificationPreferences.properties.channels.properties.sms, { additionalProperties: false })),
          voice: Type.Optional(Type.Partial(NotificationPreferences.properties.channels.properties.voice, { additionalProperties: false })),
          push: Type.Optional(Type.Partial(NotificationPreferences.properties.channels.properties.push, { additionalProperties: false })),
        },
        { additionalProperties: false },
      ),
    ),
    priorities: Type.Optional(Type.Partial(NotificationPreferences.properties.priorities, { additionalProperties: false })),
    rules: Type.Optional(NotificationPreferences.properties.rules),
    whenResolved: Type.Optional(NotificationPreferences.properties.whenResolved),
    quietHours: Type.Optional(Type.Partial(NotificationPreferences.properties.quietHours, { additionalProperties: false })),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type NotificationPreferencesPatch = Static<typeof NotificationPreferencesPatch>

/**
 * What a user has before choosing: e-mail on for everything, SMS and voice off until a number is
 * given, push on; urgent priorities reach more channels; quiet hours off, P1 bypassing them.
 */
export function defaultPreferences(timeZone: string | null): NotificationPreferences {
  return {
    channels: {
      email: { enabled: true, address: null },
      sms: { enabled: false, phoneNumber: null },
      voice: { enabled: false, phoneNumber: null },
      push: { enabled: true },
    },
    priorities: {
      P1: ['sms', 'voice', 'push', 'email'],
      P2: ['sms', 'push', 'email'],
      P3: ['push', 'email'],
      P4: ['email'],
      P5: ['email'],
    },
    rules: null,
    whenResolved: true,
    quietHours: { enabled: false, start: '22:00', end: '07:00', timeZone: timeZone ?? 'UTC', bypassPriorities: ['P1'] },
  }
}

/**
 * Stored preferences as they read today: ones saved before rules existed have none (the
 * priorities decide, as before), and ones saved before `whenResolved` existed are told.
 */
export function storedPreferencesOf(stored: Partial<NotificationPreferences> & Omit<NotificationPreferences, 'rules' | 'whenResolved'>) {
  return { ...stored, rules: stored.rules ?? null, whenResolved: stored.whenResolved ?? true }
}

/** The preferences with the change applied, section by section. */
export function applyPatch(current: NotificationPreferences, patch: NotificationPreferencesPatch): NotificationPreferences {
  const next = structuredClone(current)
  for (const channel of channels) Object.assign(next.channels[channel], patch.channels?.[channel] ?? {})
  Object.assign(next.priorities, patch.priorities ?? {})
  if (patch.rules !== undefined) next.rules = patch.rules
  if (patch.whenResolved !== undefined) next.whenResolved = patch.whenResolved
  Object.assign(next.quietHours, patch.quietHours ?? {})
  return next
}

/** The rules a schema cannot say; the first broken one, as a field path and a message. */
export function brokenRule(preferences: NotificationPreferences, isTimeZone: (zone: string) => boolean): [string, string] | undefined {
  for (const channel of ['sms', 'voice'] as const) {
    if (preferences.channels[channel].enabled && !preferences.channels[channel].phoneNumber)
      return [`channels/${channel}/phoneNumber`, `is required while ${channel} is enabled`]
  }
  for (const urgency of urgencies) {
    const seen = new Set<string>()
    for (const [index, rule] of (preferences.rules?.[urgency] ?? []).entries()) {
      if (seen.has(rule.channel)) return [`rules/${urgency}/${index}/channel`, `names ${rule.channel} twice`]
      seen.add(rule.channel)
    }
  }
  if (!isTimeZone(preferences.quietHours.timeZone)) return ['quietHours/timeZone', 'must be an IANA time zone such as Europe/Berlin']
  if (preferences.quietHours.start === preferences.quietHours.end) return ['quietHours/end', 'must differ from start']
  return undefined
}
