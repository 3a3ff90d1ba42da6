// Object storage keyed by Iceberg location URIs: the local filesystem (file://) and Azure Blob
// (abfs[s]://container@account.dfs.core.windows.net/...) and S3 (s3://bucket/key), chosen by scheme. Files not re-exported
// here are internal to shared/storage.
export { type AzureBlobConfig, AzureBlobStorage, type AzureLocation, parseAzureLocation } from './azure.ts'
export { type AzureAccountsConfig, AzureAccountsStorage } from './azure-vended.ts'
export { LocalFileStorage, localPath } from './local.ts'
export {
  locationKey,
  type ObjectStorage,
  type StorageCallOptions,
  type StoredObject,
  schemeOf,
} from './object-storage.ts'
export { RoutedStorage, type StorageConfig, storageFor } from './routing.ts'
export { multipartPartSize, parseS3Location, type S3Config, type S3Location, S3Storage } from './s3.ts'
export { namedStorageFailure, type S3FailureReason, s3Failure, s3ReasonOf } from './s3-failure.ts'
