export { checkTarget, guardedLookup, TargetRefused, type OutboundPolicy } from './guard.js'
