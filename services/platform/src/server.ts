import { readEnvironment, standaloneServiceConfig } from '@svc/config'
import { exitOnConfigurationError, serve } from '@svc/runtime'
import { buildApp } from './app.js'

const environment = exitOnConfigurationError(() => readEnvironment())
const config = exitOnConfigurationError(() => standaloneServiceConfig(environment))
await serve([{ app: await buildApp(config), port: environment.PLATFORM_PORT }], { host: config.host, metricsPort: config.metricsPort })
