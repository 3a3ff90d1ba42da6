// Public surface of the local stack for tests and scripts. Everything else in this folder is
// internal to `npm run stack`.

export {
  type BrokerRestart,
  brokerNames,
  freezeService,
  restartBroker,
  restartPostgres,
  sharedStackVariable,
  stackOptions,
  thawService,
} from './faults.ts'
export { type Endpoints, readEndpoints, stackDir } from './layout.ts'
export { killService, running, services } from './processes.ts'
