export type LevelWithSilent = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
