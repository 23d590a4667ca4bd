// The schemas module: Avro event schemas, their TypeScript types, and the single-object codec.
export * from './generated/types.js';
export { EventCodec, DEFAULT_MAX_EVENT_BYTES, type AnyEvent, type EventCodecOptions } from './codec.js';
export { SchemaRegistry, isEventName, MARKER, HEADER_BYTES, type SchemaEntry, type Resolver } from './registry.js';
export { DecodeError, InvalidEventError, OversizeEventError, SchemaError, type DecodeFailure } from './errors.js';
export { validateEvent, validateIngestStep, type ValidationResult } from './validate.js';
export { announcedGroupSize, MAX_GROUP_SIZE, GROUP_SIZE_INFO_KEY } from './group-size.js';
export { canonicalForm, canonicalFormOfJson } from './canonical.js';
export { crc64Avro, fingerprintBytes, fingerprintHex, parseFingerprintHex, fingerprintToSigned, EMPTY as CRC64_AVRO_EMPTY } from './fingerprint.js';
export { defaultSchemasDir, listSchemaFiles } from './files.js';
