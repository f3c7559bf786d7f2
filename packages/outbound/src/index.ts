export { checkAddress, checkTarget, guardedLookup, TargetRefused, TargetUnresolved, type OutboundPolicy } from './guard.js'
