/**
 * What a Microsoft Teams Workflows webhook ("post to a channel when a webhook request is
 * received") takes: a message whose one attachment is an Adaptive Card (1.4, the version Teams
 * renders everywhere). Microsoft retired the Office 365 connectors' MessageCard.
 */
export function adaptiveCardMessage(card: { body: object[]; actions: object[] }) {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: card.body,
          actions: card.actions,
        },
      },
    ],
  }
}
