export { buildApp } from './app.js'
