/**
 * Text as Slack's mrkdwn shows it literally. Slack reads `<…>` as a mention (`<!here>`,
 * `<!channel>`, `<@U…>`) or a link whose label may hide its target (`<https://evil|docs>`), and
 * asks senders to escape exactly these three characters
 * (https://api.slack.com/reference/surfaces/formatting#escaping). Every text that reaches
 * mrkdwn from a person or an ingested event passes through here: alert and incident titles,
 * notes, analyses, names and reasons, status page updates.
 */
export function mrkdwn(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}
