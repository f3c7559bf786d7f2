export { productUserRoutes } from './routes.js'
