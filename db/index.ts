import type { Migration } from 'kysely'
import * as coreIdentity from './migrations/0001_core_identity.js'
import * as auditLogAndOwnerInvariant from './migrations/0002_audit_log_and_owner_invariant.js'
import * as scimTokens from './migrations/0003_scim_tokens.js'
import * as scimProvisioningAndSso from './migrations/0004_scim_provisioning_and_sso.js'
import * as webhookConfigs from './migrations/0005_webhook_configs.js'
import * as alertsAndIngestion from './migrations/0006_alerts_and_ingestion.js'
import * as deployEvents from './migrations/0007_deploy_events.js'
import * as analysesAndBudgets from './migrations/0008_analyses_and_budgets.js'
import * as rcaDocuments from './migrations/0009_rca_documents.js'
import * as rcaDrafts from './migrations/0010_rca_drafts.js'
import * as notificationPreferences from './migrations/0011_notification_preferences.js'
import * as outbox from './migrations/0012_outbox.js'
import * as ingestRateLimits from './migrations/0013_ingest_rate_limits.js'
import * as profileClaims from './migrations/0014_profile_claims.js'
import * as scimTokenExpiry from './migrations/0015_scim_token_expiry.js'
import * as deployDeliveryIds from './migrations/0016_deploy_delivery_ids.js'
import * as alertOccurrenceRows from './migrations/0017_alert_occurrence_rows.js'
import * as aiReservations from './migrations/0018_ai_reservations.js'
import * as teams from './migrations/0019_teams.js'
import * as schedules from './migrations/0020_schedules.js'
import * as escalation from './migrations/0021_escalation.js'
import * as silences from './migrations/0022_silences.js'
import * as calendarFeeds from './migrations/0023_calendar_feeds.js'
import * as contactMethods from './migrations/0024_contact_methods.js'
import * as chatIntegrations from './migrations/0025_chat_integrations.js'
import * as outboundWebhooks from './migrations/0026_outbound_webhooks.js'
import * as workflows from './migrations/0027_workflows.js'
import * as statusPages from './migrations/0028_status_pages.js'
import * as statusSubscriberConfirmations from './migrations/0029_status_subscriber_confirmations.js'
import * as synthetics from './migrations/0030_synthetics.js'
import * as billing from './migrations/0031_billing.js'
import * as billingExemption from './migrations/0032_billing_exemption.js'
import * as reports from './migrations/0033_reports.js'
import * as statusNotificationLog from './migrations/0034_status_notification_log.js'
import * as jsonKeysAsReceived from './migrations/0035_json_keys_as_received.js'
import * as verifiedAddresses from './migrations/0036_verified_addresses.js'
import * as phoneCodeLimits from './migrations/0037_phone_code_limits.js'
import * as reportSections from './migrations/0038_report_sections.js'
import * as organizationCreators from './migrations/0039_organization_creators.js'
import * as customDomainVerification from './migrations/0040_custom_domain_verification.js'
import * as outboxOrderAndSubscriberOrigin from './migrations/0041_outbox_order_and_subscriber_origin.js'
import * as runnerHeartbeats from './migrations/0042_runner_heartbeats.js'
import * as incidents from './migrations/0043_incidents.js'
import * as incidentCorrelation from './migrations/0044_incident_correlation.js'
import * as slackInteractivity from './migrations/0045_slack_interactivity.js'
import * as repage from './migrations/0046_repage.js'
import * as supportHours from './migrations/0047_support_hours.js'
import * as incidentStatusPages from './migrations/0048_incident_status_pages.js'
import * as agenticLoop from './migrations/0049_agentic_loop.js'
import * as runbooksAndAgents from './migrations/0050_runbooks_and_agents.js'
import * as analyticsEvents from './migrations/0051_analytics_events.js'
import * as userActivities from './migrations/0052_user_activities.js'
import * as retentionIndexes from './migrations/0053_retention_indexes.js'
import * as analysisEventOrder from './migrations/0054_analysis_event_order.js'
import * as invitations from './migrations/0055_invitations.js'
import * as pagerDutyChangeEvents from './migrations/0056_pagerduty_change_events.js'
import * as statuspageLocales from './migrations/0057_statuspage_locales.js'
import * as outboxCaptured from './migrations/0058_outbox_captured.js'
import * as syntheticsDueIndex from './migrations/0059_synthetics_due_index.js'
import * as changeNotices from './migrations/0060_change_notices.js'
import * as activityByOrganization from './migrations/0061_activity_by_organization.js'
import * as responderRequestBounds from './migrations/0062_responder_request_bounds.js'
import * as slackDeliveries from './migrations/0063_slack_deliveries.js'
import * as outboxSequence from './migrations/0064_outbox_sequence.js'
import * as alertOnset from './migrations/0065_alert_onset.js'
import * as alertLinks from './migrations/0066_alert_links.js'
import * as incidentSettings from './migrations/0067_incident_settings.js'
import * as statusBanner from './migrations/0068_status_banner.js'
import * as apiTokens from './migrations/0069_api_tokens.js'
import * as services from './migrations/0070_services.js'
import * as serviceEdges from './migrations/0071_service_edges.js'
import * as checkServices from './migrations/0072_check_services.js'
import * as incidentTypesAndFields from './migrations/0073_incident_types_and_fields.js'
import * as followUps from './migrations/0074_follow_ups.js'
import * as roleChecklists from './migrations/0075_role_checklists.js'
import * as workflowDelaysAndChannels from './migrations/0076_workflow_delays_and_channels.js'
import * as incidentSeverities from './migrations/0077_incident_severities.js'
import * as incidentTypeRoles from './migrations/0078_incident_type_roles.js'
import * as actionItemTickets from './migrations/0079_action_item_tickets.js'
import * as syntheticChecksDueNotices from './migrations/0080_synthetic_checks_due_notices.js'
import * as privateStatusPages from './migrations/0081_private_status_pages.js'
import * as maintenanceSilences from './migrations/0082_maintenance_silences.js'
import * as statusPageBranding from './migrations/0083_status_page_branding.js'
import * as subscriberChannels from './migrations/0084_subscriber_channels.js'
import * as smsSubscribers from './migrations/0085_sms_subscribers.js'
import * as statusPageAudiences from './migrations/0086_status_page_audiences.js'
import * as statusIncidentTemplates from './migrations/0087_status_incident_templates.js'
import * as multistepChecks from './migrations/0088_multistep_checks.js'
import * as browserChecks from './migrations/0089_browser_checks.js'
import * as correlationWaiting from './migrations/0090_correlation_waiting.js'
import * as urgentEscalationsFirst from './migrations/0091_urgent_escalations_first.js'
import * as escalationsWaitForCorrelation from './migrations/0092_escalations_wait_for_correlation.js'
import * as syntheticRunsByDueTime from './migrations/0093_synthetic_runs_by_due_time.js'

/**
 * Every migration, in order, listed by hand rather than found by scanning a folder, so a
 * bundle or a Docker image cannot silently miss one. Names sort in the order they apply.
 */
export const migrations: Record<string, Migration> = {
  '0001_core_identity': coreIdentity,
  '0002_audit_log_and_owner_invariant': auditLogAndOwnerInvariant,
  '0003_scim_tokens': scimTokens,
  '0004_scim_provisioning_and_sso': scimProvisioningAndSso,
  '0005_webhook_configs': webhookConfigs,
  '0006_alerts_and_ingestion': alertsAndIngestion,
  '0007_deploy_events': deployEvents,
  '0008_analyses_and_budgets': analysesAndBudgets,
  '0009_rca_documents': rcaDocuments,
  '0010_rca_drafts': rcaDrafts,
  '0011_notification_preferences': notificationPreferences,
  '0012_outbox': outbox,
  '0013_ingest_rate_limits': ingestRateLimits,
  '0014_profile_claims': profileClaims,
  '0015_scim_token_expiry': scimTokenExpiry,
  '0016_deploy_delivery_ids': deployDeliveryIds,
  '0017_alert_occurrence_rows': alertOccurrenceRows,
  '0018_ai_reservations': aiReservations,
  '0019_teams': teams,
  '0020_schedules': schedules,
  '0021_escalation': escalation,
  '0022_silences': silences,
  '0023_calendar_feeds': calendarFeeds,
  '0024_contact_methods': contactMethods,
  '0025_chat_integrations': chatIntegrations,
  '0026_outbound_webhooks': outboundWebhooks,
  '0027_workflows': workflows,
  '0028_status_pages': statusPages,
  '0029_status_subscriber_confirmations': statusSubscriberConfirmations,
  '0030_synthetics': synthetics,
  '0031_billing': billing,
  '0032_billing_exemption': billingExemption,
  '0033_reports': reports,
  '0034_status_notification_log': statusNotificationLog,
  '0035_json_keys_as_received': jsonKeysAsReceived,
  '0036_verified_addresses': verifiedAddresses,
  '0037_phone_code_limits': phoneCodeLimits,
  '0038_report_sections': reportSections,
  '0039_organization_creators': organizationCreators,
  '0040_custom_domain_verification': customDomainVerification,
  '0041_outbox_order_and_subscriber_origin': outboxOrderAndSubscriberOrigin,
  '0042_runner_heartbeats': runnerHeartbeats,
  '0043_incidents': incidents,
  '0044_incident_correlation': incidentCorrelation,
  '0045_slack_interactivity': slackInteractivity,
  '0046_repage': repage,
  '0047_support_hours': supportHours,
  '0048_incident_status_pages': incidentStatusPages,
  '0049_agentic_loop': agenticLoop,
  '0050_runbooks_and_agents': runbooksAndAgents,
  '0051_analytics_events': analyticsEvents,
  '0052_user_activities': userActivities,
  '0053_retention_indexes': retentionIndexes,
  '0054_analysis_event_order': analysisEventOrder,
  '0055_invitations': invitations,
  '0056_pagerduty_change_events': pagerDutyChangeEvents,
  '0057_statuspage_locales': statuspageLocales,
  '0058_outbox_captured': outboxCaptured,
  '0059_synthetics_due_index': syntheticsDueIndex,
  '0060_change_notices': changeNotices,
  '0061_activity_by_organization': activityByOrganization,
  '0062_responder_request_bounds': responderRequestBounds,
  '0063_slack_deliveries': slackDeliveries,
  '0064_outbox_sequence': outboxSequence,
  '0065_alert_onset': alertOnset,
  '0066_alert_links': alertLinks,
  '0067_incident_settings': incidentSettings,
  '0068_status_banner': statusBanner,
  '0069_api_tokens': apiTokens,
  '0070_services': services,
  '0071_service_edges': serviceEdges,
  '0072_check_services': checkServices,
  '0073_incident_types_and_fields': incidentTypesAndFields,
  '0074_follow_ups': followUps,
  '0075_role_checklists': roleChecklists,
  '0076_workflow_delays_and_channels': workflowDelaysAndChannels,
  '0077_incident_severities': incidentSeverities,
  '0078_incident_type_roles': incidentTypeRoles,
  '0079_action_item_tickets': actionItemTickets,
  '0080_synthetic_checks_due_notices': syntheticChecksDueNotices,
  '0081_private_status_pages': privateStatusPages,
  '0082_maintenance_silences': maintenanceSilences,
  '0083_status_page_branding': statusPageBranding,
  '0084_subscriber_channels': subscriberChannels,
  '0085_sms_subscribers': smsSubscribers,
  '0086_status_page_audiences': statusPageAudiences,
  '0087_status_incident_templates': statusIncidentTemplates,
  '0088_multistep_checks': multistepChecks,
  '0089_browser_checks': browserChecks,
  '0090_correlation_waiting': correlationWaiting,
  '0091_urgent_escalations_first': urgentEscalationsFirst,
  '0092_escalations_wait_for_correlation': escalationsWaitForCorrelation,
  '0093_synthetic_runs_by_due_time': syntheticRunsByDueTime,
}
