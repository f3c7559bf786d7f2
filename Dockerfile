# One image for both services: `docker run IMAGE platform` or `docker run IMAGE product`.
# The build stage compiles; the runtime stage holds only what scripts/build-runtime.sh deploys.
# Configuration comes from the environment (README, "Configuration"); a service on its own
# needs DATABASE_URL, AUTH_ISSUER and AUTH_CLIENT_ID.

FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN npm install --global pnpm@10.34.8
# Manifests first, so the dependency layer is rebuilt only when they change.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml ./
COPY db/package.json db/
COPY bench/package.json bench/
COPY packages/ai/package.json packages/ai/
COPY packages/analytics/package.json packages/analytics/
COPY packages/audit/package.json packages/audit/
COPY packages/auth/package.json packages/auth/
COPY packages/config/package.json packages/config/
COPY packages/db/package.json packages/db/
COPY packages/dev-idp/package.json packages/dev-idp/
COPY packages/events/package.json packages/events/
COPY packages/http/package.json packages/http/
COPY packages/jobs/package.json packages/jobs/
COPY packages/members/package.json packages/members/
COPY packages/metrics/package.json packages/metrics/
COPY packages/notifier/package.json packages/notifier/
COPY packages/outbound/package.json packages/outbound/
COPY packages/cli/package.json packages/cli/
COPY packages/client/package.json packages/client/
COPY packages/check-runner/package.json packages/check-runner/
COPY packages/billing/package.json packages/billing/
COPY packages/profile/package.json packages/profile/
COPY packages/runtime/package.json packages/runtime/
COPY packages/testkit/package.json packages/testkit/
COPY plugins/alerting/package.json plugins/alerting/
COPY plugins/statuspages/package.json plugins/statuspages/
COPY plugins/synthetics/package.json plugins/synthetics/
COPY plugins/insights/package.json plugins/insights/
COPY plugins/platform/package.json plugins/platform/
COPY plugins/product-users/package.json plugins/product-users/
COPY services/platform/package.json services/platform/
COPY services/product/package.json services/product/
COPY services/relay/package.json services/relay/
RUN pnpm install --frozen-lockfile
COPY . .
# The types are checked here, since the recipe below only transpiles (decision 0013).
RUN pnpm typecheck
# Transpiles every package and deploys each service with production dependencies only.
RUN scripts/build-runtime.sh /runtime

# The runtime stage: Node, the two compiled services and their production dependencies.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /runtime /app
USER node
EXPOSE 3003 3004
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 CMD ["node", "/app/healthcheck.mjs"]
ENTRYPOINT ["/app/service-entrypoint.sh"]
CMD ["platform"]
