import type { ComponentStatus, IncidentStatus, MaintenanceStatus, OverallState } from '../model.js'

/**
 * Everything a reader of a status page is told in words, in one language: the page, the widget,
 * the feeds, the answers of the subscription links and the subscribers' e-mails (decision 0027).
 * A catalog is a typed module rather than JSON for a library such as i18next: a language missing
 * a message, or a message missing an argument, fails the type check instead of showing a key to
 * a reader. Dates and numbers are formatted by `Intl` in the catalog's `intlLocale`; no message
 * here counts anything that needs plural forms.
 */
export interface Messages {
  /** Its language tag (`lang`, `Content-Language`). */
  language: string
  /** The language's name in itself, for the page's language links. */
  languageName: string
  /** The locale `Intl` formats dates and numbers in ("24 Nov 2026, 09:30 CET" in English). */
  intlLocale: string
  componentStatus: Record<ComponentStatus, string>
  progress: Record<IncidentStatus | MaintenanceStatus, string>
  /** The page's overall status (Statuspage's words in English). */
  overall: Record<OverallState, string>
  page: {
    title(page: string): string
    activeIncidents: string
    maintenanceInProgress: string
    components: string
    upcomingMaintenance: string
    incidentHistory: string
    subscribeHeading: string
    subscribeButton: string
    emailLabel: string
    noComponents: string
    noIncidents: string
    support: string
    languages: string
    timesIn(timeZone: string): string
    scheduled(from: string, until: string): string
    uptimeLabel: string
    ninetyDaysAgo: string
    today: string
    /** `percentage` is formatted already ("99.95%", "99,95 %"). */
    uptime(percentage: string): string
    noData: string
    /** The feeds' title. */
    history(page: string): string
  }
  widget: {
    more(count: number): string
    open(page: string): string
  }
  /** The pages the subscription links answer. */
  answers: {
    almostThere: string
    almostThereText(page: string): string
    subscribed: string
    subscribedText(page: string): string
    linkNotValid: string
    linkNotValidText: string
    unsubscribeTitle(page: string): string
    unsubscribeButton: string
    unsubscribed: string
    unsubscribedText(page: string): string
  }
  /**
   * Private pages (decision 0015, "Private pages"). What an outsider is shown names no page: it
   * reads the same for a private page as for a slug no page has.
   */
  access: {
    notFoundTitle: string
    notFoundText: string
    requestText: string
    requestButton: string
    membersText: string
    sentTitle: string
    sentText(minutes: number): string
    continueTitle(page: string): string
    continueButton: string
    linkNotValidText: string
    signOut: string
    signedOutTitle: string
    emailSubject(page: string): string
    emailBody(page: string, url: string, minutes: number): string[]
  }
  email: {
    confirmSubject(page: string): string
    confirmBody(page: string, url: string): string[]
    components(list: string): string
    window(from: string, until: string): string
    statusPage(url: string): string
    footer(page: string, unsubscribeUrl: string): string
  }
  /** Text messages: short, and STOP (the carriers' own keyword) ends them. */
  sms: {
    code(page: string, code: string): string
    stop: string
  }
}
