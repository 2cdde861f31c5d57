// Runs the Qdrant fake as a process, for tests outside node (the C++ backend tests):
//   node qdrant_fake_main.mjs [--api-key KEY]
// prints "listening on 127.0.0.1:PORT" once ready. GET /__fake/violations answers the schema
// violations seen so far (and the number of requests); it is the fake's own path, never
// Qdrant's. Exits 2 with the reason when the OpenAPI document cannot be found.
import { loadQdrantOpenApi } from './openapi_validate.mjs';
import { QdrantFake } from './qdrant_fake.mjs';

const { doc, reason } = loadQdrantOpenApi();
if (!doc) {
  console.error(reason);
  process.exit(2);
}
const keyAt = process.argv.indexOf('--api-key');
const fake = new QdrantFake({ doc, apiKey: keyAt > 0 ? process.argv[keyAt + 1] : '' });
await fake.listen();
console.log(`listening on 127.0.0.1:${fake.port}`);
process.stdin.on('end', () => process.exit(0));  // the parent went away
process.stdin.resume();
