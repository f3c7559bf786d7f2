/** Where a Slack app sends button presses: one URL per integration, whose signing secret verifies them. */
export const slackInteractivityPath = (integrationId: string) => `/api/v1/chat/slack/${integrationId}/interactivity`

/** Where a Slack app sends its `/incident` slash command. */
export const slackCommandPath = (integrationId: string) => `/api/v1/chat/slack/${integrationId}/commands`
