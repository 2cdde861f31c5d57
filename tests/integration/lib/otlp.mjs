// An OTLP/HTTP trace export's body, either encoding, as the JSON mapping's document: the
// protobuf form is read by the OpenTelemetry JavaScript SDK's own generated decoder
// (@opentelemetry/otlp-transformer, built from the opentelemetry-proto definitions), with ids
// as lowercase hex and 64-bit integers as decimal strings, as OTLP/JSON writes them.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const { ExportTraceServiceRequest } = root.opentelemetry.proto.collector.trace.v1;

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

function toJsonMapping(value, key) {
  if (ID_FIELDS.has(key)) return Buffer.from(value).toString('hex');
  if (Array.isArray(value)) return value.map((v) => toJsonMapping(v));
  if (value && typeof value === 'object' && !Buffer.isBuffer(value) && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJsonMapping(v, k)]));
  }
  return value;
}

// `body`: a Buffer. Throws on a body the content type's decoder refuses.
export function decodeTraces(contentType, body) {
  if (contentType === 'application/json') return JSON.parse(body.toString('utf8'));
  if (contentType !== 'application/x-protobuf') throw new Error(`content-type ${contentType}`);
  const message = ExportTraceServiceRequest.decode(body);
  // Present fields only (no defaults), enums as numbers, 64-bit integers as strings.
  const object = ExportTraceServiceRequest.toObject(message, { longs: String, enums: Number, bytes: Array });
  return toJsonMapping(object);
}
